import { DeliveryError, PayloadTooLargeError } from "../errors.js";
import { MAX_ANSWER_BYTES } from "../limits.js";
import { readAnswerText } from "../read-body.js";

/** What a chat product's API answered: the HTTP status, its Retry-After hint, and the body as JSON if it was. */
export interface ApiAnswer {
  status: number;
  retryAfterMs: number | undefined;
  json: unknown;
  text: string;
}

/**
 * POSTs JSON to a chat product's API. Network errors and timeouts throw a retryable DeliveryError; the
 * message names `api` and never the URL, which can carry a token (Telegram's bot URLs do).
 */
export async function postJson(
  api: string,
  url: string,
  init: { headers?: Record<string, string>; body: unknown; timeoutMs: number },
): Promise<ApiAnswer> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", ...init.headers },
      body: JSON.stringify(init.body),
      signal: AbortSignal.timeout(init.timeoutMs),
    });
  } catch (error) {
    throw new DeliveryError("SEND_FAILED", `${api} unreachable: ${describeError(error)}`, true);
  }
  let text: string;
  try {
    text = await readAnswerText(response, MAX_ANSWER_BYTES);
  } catch (error) {
    if (!(error instanceof PayloadTooLargeError)) throw error;
    // Whether the message went out cannot be read from such an answer; not retrying risks no second reply.
    throw new DeliveryError(
      "SEND_FAILED",
      `${api} answered ${response.status} with a body over ${MAX_ANSWER_BYTES} bytes`,
      false,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: response.status,
    retryAfterMs: retryAfterMs(response.headers.get("retry-after")),
    json,
    text,
  };
}

/** `Retry-After` in seconds (the form chat APIs use); an HTTP date or garbage gives no hint. */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

/** An error's message and its cause's, without anything else (no URLs, no request). */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
