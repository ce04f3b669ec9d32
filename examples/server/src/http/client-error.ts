import { type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { ERROR_CODES, type ErrorBody, type ErrorStatus } from "./errors.js";

/**
 * Node's HTTP parser refuses some requests before any route sees them, and by default answers with an
 * empty body. These are the same refusals, with the `{detail, error_code}` body every error promises.
 */
const REFUSALS: Readonly<Record<string, { readonly status: ErrorStatus; readonly detail: string }>> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    detail:
      "Request header fields too large: the request line and headers together exceed the server's limit",
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, detail: "Chunk extensions of the request body too large" },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: "The request did not arrive in time" },
};
export const MALFORMED = { status: 400, detail: "Malformed HTTP request" } as const;

/**
 * After a refusal, what the client is still sending is read and discarded, up to this many bytes and for
 * this long, before the connection is closed: closing a socket with unread data makes the kernel answer
 * with a reset, and the client then loses the refusal it was sent ("other side closed").
 */
export const LINGER_BYTES = 1024 * 1024;
export const LINGER_MS = 2_000;

/** The `{detail, error_code}` body of a refusal, as JSON. */
export function refusalJson(status: ErrorStatus, detail: string): string {
  const body: ErrorBody = { detail, error_code: ERROR_CODES[status] };
  return JSON.stringify(body);
}

// Sockets refused here, with the byte count read when they were: the parser, now in its error state,
// reports every later chunk as another client error, and that chunk has been read (drained) by then.
const lingering = new WeakMap<Duplex, number>();

function bytesRead(socket: Duplex): number {
  return (socket as Partial<Socket>).bytesRead ?? 0;
}

/**
 * Answers the HTTP parser's refusals with the JSON error body, then closes the connection. A refusal can come on
 * a kept-alive connection that has answered requests before: it is answered too, unless the current response has
 * begun (the refusal's bytes would land inside it).
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  // The response being written on each connection; gone once it is finished (handed to the kernel whole).
  const inFlight = new WeakMap<Duplex, ServerResponse>();
  server.on("request", (request, response: ServerResponse) => {
    const { socket } = request;
    inFlight.set(socket, response);
    response.once("finish", () => {
      if (inFlight.get(socket) === response) inFlight.delete(socket);
    });
  });
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const refusedAt = lingering.get(socket);
    if (refusedAt !== undefined) {
      // More of the refused request: already read and discarded; stop once the bound is passed.
      if (bytesRead(socket) - refusedAt > LINGER_BYTES) socket.destroy();
      return;
    }
    // Nothing can be answered on a reset socket, nor once the current response has begun (as Node's own default).
    // The socket's `bytesWritten` is no test of that: on a kept-alive connection it counts the earlier, finished
    // answers, and the refusal of the next request was lost (a reset: fetch's "other side closed").
    if (error.code === "ECONNRESET" || !socket.writable || inFlight.get(socket)?.headersSent === true) {
      socket.destroy();
      return;
    }
    const { status, detail } = (error.code !== undefined && REFUSALS[error.code]) || MALFORMED;
    logger.debug({ code: error.code, status }, "request refused by the HTTP parser");
    const json = refusalJson(status, detail);
    lingering.set(socket, bytesRead(socket));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(json)}\r\n` +
        "Connection: close\r\n\r\n" +
        json,
    );
    // The connection closes when the client does (it has the answer), or at the time bound.
    const deadline = setTimeout(() => socket.destroy(), LINGER_MS);
    deadline.unref();
    socket.once("close", () => clearTimeout(deadline));
    socket.once("end", () => socket.destroy());
  });
}
