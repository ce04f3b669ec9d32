import { outboundTimer } from "../diagnostics.js";
import { DeliveryError } from "../errors.js";
import { MAX_ANSWER_BYTES } from "../limits.js";
import { HttpPostError, httpPost } from "../node/http-post.js";

/** What a chat product's API (or the agent) answered: the HTTP status, its Retry-After hint, the body as JSON if it was. */
export interface ApiAnswer {
  status: number;
  retryAfterMs: number | undefined;
  json: unknown;
  text: string;
  /** False when the connection broke or the time ran out after the status arrived; `text` is what came. */
  complete: boolean;
}

const decoder = new TextDecoder();

/**
 * POSTs JSON: the one outbound client of the inbox, used by every channel's send, the agent and the CLI.
 * Network errors and timeouts throw a retryable DeliveryError of `code` (SEND_FAILED unless told); an answer over
 * MAX_ANSWER_BYTES a final one. Messages name `api`, never the URL, which can carry a token (Telegram's bot URLs do).
 */
export async function postJson(
  api: string,
  url: string,
  init: {
    headers?: Record<string, string>;
    body: unknown;
    timeoutMs: number;
    code?: "SEND_FAILED" | "AGENT_FAILED";
    /** Gives the call up at once when aborted (a retryable DeliveryError). */
    signal?: AbortSignal | undefined;
  },
): Promise<ApiAnswer> {
  const code = init.code ?? "SEND_FAILED";
  let answer: Awaited<ReturnType<typeof httpPost>>;
  const timed = outboundTimer(api);
  try {
    answer = await httpPost(url, {
      headers: { "content-type": "application/json; charset=utf-8", ...init.headers },
      body: JSON.stringify(init.body),
      timeoutMs: init.timeoutMs,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      signal: init.signal,
    });
    timed?.(answer.status);
  } catch (error) {
    timed?.(error instanceof HttpPostError && error.status !== undefined ? error.status : null);
    if (!(error instanceof HttpPostError)) throw error;
    // Over the limit, whether the request took effect cannot be read from the answer; retrying risks doing it twice.
    // A request that cannot be sent (the URL, a header) fails the same way every time.
    const message = {
      unreachable: `${api} unreachable: ${error.message}`,
      "too-large": `${api} ${error.message}`,
      "invalid-request": `${api} request cannot be sent: ${error.message}`,
      aborted: `${api} call given up: ${error.message}`,
    }[error.reason];
    throw new DeliveryError(code, message, error.reason === "unreachable" || error.reason === "aborted");
  }
  const text = decoder.decode(answer.body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: answer.status,
    retryAfterMs: retryAfterMs(answer.retryAfter),
    json,
    text,
    complete: answer.complete,
  };
}

/** Retry-After bound: past it the hint is taken as this (a day), so a hostile answer cannot park a message for months. */
/** The longest wait an upstream's rate-limit hint can impose on a message: a day. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * `Retry-After` in seconds (the form chat APIs use) or as an HTTP date, at most a day; garbage gives no hint.
 * `now` is for tests.
 */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,9}$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  // IMF-fixdate, e.g. "Wed, 21 Oct 2026 07:28:00 GMT" (RFC 9110 §10.2.3); a date in the past means now.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(at - now, 0), MAX_RETRY_AFTER_MS);
}
