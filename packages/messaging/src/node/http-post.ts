import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * The outbound HTTP of the worker (chat APIs, the agent) on node:http with kept-alive connections. Node 20's
 * `fetch` was about 35% of the worker's JavaScript time per answered message (a WHATWG Request, Headers,
 * AbortSignal and web stream per call, and a new connection when its pool missed); a plain request on a reused
 * socket costs a fraction of that. The inbox is Node-only (README, Runtimes), so there is no fetch fallback.
 */

/**
 * An idle kept-alive socket is closed after this long, below the 5 s keep-alive of Node's and most servers'
 * defaults, so a socket is not reused just as its server closes it. A server's own shorter `Keep-Alive:
 * timeout=` hint is followed by Node's agent.
 */
const IDLE_SOCKET_MS = 4_000;

/** Response headers, in bytes, Node's parser accepts (its default, stated here so it is a decision). */
export const MAX_ANSWER_HEADER_BYTES = 16 * 1024;

// LIFO hands out the most recently used socket, so the ones left idle expire instead of being kept barely alive.
const agents = {
  "http:": new HttpAgent({ keepAlive: true, scheduling: "lifo", timeout: IDLE_SOCKET_MS }),
  "https:": new HttpsAgent({ keepAlive: true, scheduling: "lifo", timeout: IDLE_SOCKET_MS }),
};

export interface HttpAnswer {
  status: number;
  /** The first `Retry-After` header, as sent. */
  retryAfter: string | undefined;
  body: Buffer;
  /** False when the connection broke or the deadline passed after the status arrived: `body` is what came. */
  complete: boolean;
}

/** Why no answer could be used: never a URL (Telegram's carry the bot token), only what happened. */
export class HttpPostError extends Error {
  constructor(
    /**
     * `invalid-request`: the URL or a header cannot be sent at all (configuration); nothing left the process.
     * `aborted`: the caller's signal aborted the call (the worker is stopping).
     */
    readonly reason: "unreachable" | "too-large" | "invalid-request" | "aborted",
    message: string,
    /** The status, when the answer was refused for its size. */
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "HttpPostError";
  }
}

/**
 * POSTs `body` to `url` and reads the answer. Everything is bounded: one deadline of `timeoutMs` for connecting,
 * sending, the headers and the whole body (a server that hangs or drips releases the worker then), the headers by
 * MAX_ANSWER_HEADER_BYTES, the body by `maxAnswerBytes` (refused by its Content-Length or as soon as it passes
 * the limit, without buffering the rest). Redirects are not followed: a chat API does not redirect a send, and a
 * redirect must not carry the bearer token elsewhere.
 */
export function httpPost(
  url: string,
  options: {
    headers: Record<string, string>;
    body: string;
    timeoutMs: number;
    maxAnswerBytes: number;
    /** Aborting it gives the call up at once: the connection is closed and the promise rejects (`aborted`). */
    signal?: AbortSignal | undefined;
  },
): Promise<HttpAnswer> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.reject(new HttpPostError("invalid-request", "the URL is not valid"));
  }
  const protocol = target.protocol;
  if (protocol !== "http:" && protocol !== "https:") {
    return Promise.reject(new HttpPostError("invalid-request", `unsupported protocol ${protocol}`));
  }
  const payload = Buffer.from(options.body, "utf8");
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(new HttpPostError("aborted", "the call was aborted"));
  return new Promise((resolve, reject) => {
    let settled = false;
    let response: IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let received = 0;

    const finish = (outcome: HttpAnswer | HttpPostError) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener("abort", onAbort);
      if (outcome instanceof HttpPostError) reject(outcome);
      else resolve(outcome);
    };
    const answer = (status: number, complete: boolean): HttpAnswer => ({
      status,
      retryAfter: response?.headers["retry-after"],
      body: chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, received),
      complete,
    });
    // After the status, a broken or late body is an answer cut short (the caller decides what the status
    // means); before it, there is no answer at all.
    const broke = (message: string, cause?: unknown) => {
      if (response !== undefined) finish(answer(response.statusCode ?? 0, false));
      else finish(new HttpPostError("unreachable", message, undefined, { cause }));
    };
    const tooLarge = (status: number) => {
      finish(
        new HttpPostError(
          "too-large",
          `answered ${status} with a body over ${options.maxAnswerBytes} bytes`,
          status,
        ),
      );
      // Destroyed, not drained: the socket is not reused and nothing more of the body is read.
      request.destroy();
    };

    let request: ClientRequest;
    try {
      request = (protocol === "https:" ? httpsRequest : httpRequest)(target, {
        method: "POST",
        agent: agents[protocol],
        maxHeaderSize: MAX_ANSWER_HEADER_BYTES,
        headers: { ...options.headers, "content-length": String(payload.byteLength) },
      });
    } catch (error) {
      // A header value with a control character (a token pasted with its newline): Node names the header, not the value.
      const message = error instanceof Error ? error.message : String(error);
      reject(new HttpPostError("invalid-request", message, undefined, { cause: error }));
      return;
    }
    const deadline = setTimeout(() => {
      broke(`no answer within ${options.timeoutMs} ms`);
      request.destroy();
    }, options.timeoutMs);

    // Before the whole answer, an abort is no answer at all, even after the status: the call is given up.
    const onAbort = () => {
      finish(new HttpPostError("aborted", "the call was aborted"));
      request.destroy();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    request.on("error", (error: Error) => broke(error.message, error));
    request.on("response", (res: IncomingMessage) => {
      response = res;
      const status = res.statusCode ?? 0;
      const declared = res.headers["content-length"];
      if (declared !== undefined && Number(declared) > options.maxAnswerBytes) {
        tooLarge(status);
        return;
      }
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        received += chunk.byteLength;
        if (received > options.maxAnswerBytes) tooLarge(status);
        else chunks.push(chunk);
      });
      res.on("end", () => finish(answer(status, true)));
      res.on("error", (error: Error) => broke(error.message, error));
      // A connection closed mid-body ends in 'close' without 'end' (and an 'error' on some paths).
      res.on("close", () => broke("the connection closed mid-answer"));
    });
    request.end(payload);
  });
}
