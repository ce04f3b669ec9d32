import { type Server, STATUS_CODES } from "node:http";
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
const MALFORMED = { status: 400, detail: "Malformed HTTP request" } as const;

/** Answers the HTTP parser's refusals with the JSON error body, then closes the connection. */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Nothing can be answered on a reset socket, nor once a response has begun (as Node's own default).
    const bytesWritten = (socket as Duplex & { bytesWritten?: number }).bytesWritten ?? 0;
    if (error.code === "ECONNRESET" || !socket.writable || bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const { status, detail } = (error.code !== undefined && REFUSALS[error.code]) || MALFORMED;
    logger.debug({ code: error.code, status }, "request refused by the HTTP parser");
    const body: ErrorBody = { detail, error_code: ERROR_CODES[status] };
    const json = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(json)}\r\n` +
        "Connection: close\r\n\r\n" +
        json,
    );
  });
}
