import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { MALFORMED, refusalJson } from "./client-error.js";
import type { ErrorStatus } from "./errors.js";

/**
 * Refusals of requests Node's parser lets through but HTTP forbids, before any route or middleware sees them
 * (Node's parser itself already refuses a repeated or invalid Content-Length, Content-Length with
 * Transfer-Encoding, and a repeated Transfer-Encoding; client-error.ts answers those).
 */

// RFC 3986 `host [":" port]`: an IPv6 literal in brackets, or a reg-name/IPv4 address; RFC 9112 §3.2 allows
// an empty value. Anything else (whitespace, "@", "/", a second name after ", ") is not one authority.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

// Header fields with one value: a second line leaves it to each component which one counts.
const SINGLE = ["host", "content-type"] as const;

function refusal(request: IncomingMessage): { status: ErrorStatus; detail: string } | undefined {
  const raw = request.rawHeaders;
  const lines = new Map<string, number>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    lines.set(name, (lines.get(name) ?? 0) + 1);
  }
  for (const name of SINGLE) {
    if ((lines.get(name) ?? 0) > 1) {
      return { status: 400, detail: `More than one ${name === "host" ? "Host" : "Content-Type"} header` };
    }
  }
  const host = request.headers.host;
  if (host === undefined) {
    // HTTP/1.0 may omit Host (the server's own host is used); HTTP/1.1 must send it (RFC 9112 §3.2).
    if (request.httpVersion !== "1.0") return { status: 400, detail: "Missing Host header" };
  } else if (!HOST.test(host)) {
    return { status: 400, detail: "Invalid Host header: not a host and optional port" };
  }
  const coding = request.headers["transfer-encoding"];
  if (coding !== undefined && coding.trim().toLowerCase() !== "chunked") {
    // Other codings are not decoded here, and without chunked last the body has no end (RFC 9112 §6.3).
    return { status: 400, detail: "Transfer-Encoding other than chunked is not supported" };
  }
  return undefined;
}

/** Wraps the server's request listener: a refused request gets the JSON error body and never reaches it. */
export function guardRequests(listener: RequestListener, logger: Logger): RequestListener {
  return (request: IncomingMessage, response: ServerResponse) => {
    const refused = refusal(request);
    if (refused === undefined) {
      listener(request, response);
      return;
    }
    logger.debug({ status: refused.status, detail: refused.detail }, "request refused before routing");
    const json = refusalJson(refused.status, refused.detail);
    response.writeHead(refused.status, {
      "Content-Type": "application/json",
      "Content-Length": Buffer.byteLength(json),
      // The rest of the connection cannot be trusted to be framed the way the client meant.
      Connection: "close",
    });
    response.end(json);
  };
}

/**
 * For @hono/node-server's `errorHandler`: a request it cannot turn into a `Request` (a backslash in the path,
 * a Host its URL parser rewrites, an invalid absolute URL) gets the JSON body instead of an empty 400.
 */
export function requestErrorResponse(error: unknown): Response {
  const malformed = error instanceof Error && error.name === "RequestError";
  const { status, detail }: { status: ErrorStatus; detail: string } = malformed
    ? MALFORMED
    : { status: 500, detail: "Internal server error" };
  return new Response(refusalJson(status, detail), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}
