/**
 * Cross-site request forgery: a browser attaches a cookie to any request to its site, including a
 * form another site posts (no custom header, so no CORS preflight). A token taken from a cookie
 * therefore authenticates an unsafe request only when the request proves it is same-origin:
 *
 * - `Sec-Fetch-Site: same-origin` or `none` (a user-initiated request), or
 * - an `Origin` in the allowed list (`allowedOrigins`; default: the request's own origin).
 *
 * Anything else is refused, including a request that carries neither header (browsers old enough
 * to send neither cannot be told apart from a forgery). GET and HEAD, the safe methods a page can send
 * cross-site without a preflight, pass; so does a token from a header, which a cross-site form cannot set.
 * OPTIONS is checked: a preflight never carries a cookie, and an `app.all` handler may act on any other.
 */
import { type AuthError, crossSiteError } from "../../errors.js";
import { type HeadersInput, readHeader } from "./headers.js";

export interface CsrfConfig {
  /** Serialised origins; undefined: the request's own origin only. */
  readonly allowedOrigins: ReadonlySet<string> | undefined;
}

/** What the check reads of a request. */
export interface CsrfRequest {
  readonly headers: HeadersInput;
  /**
   * The request's own origin (`scheme://host[:port]`), as the adapter knows it: the string, or a function called
   * only when the check needs it (a cookie-authenticated unsafe request carrying `Origin`).
   */
  readonly origin?: string | (() => string | undefined) | undefined;
}

function ownOriginOf<R extends CsrfRequest>(
  request: R,
  ownOrigin: ((request: R) => string | undefined) | undefined,
): string | undefined {
  if (ownOrigin !== undefined) return ownOrigin(request);
  const { origin } = request;
  return typeof origin === "function" ? origin() : origin;
}

/** undefined when a cookie-authenticated `method` may proceed, else the 403 `CSRF_REJECTED`. */
export function crossSiteRefusal<R extends CsrfRequest>(
  config: CsrfConfig,
  method: string,
  request: R,
  ownOrigin?: (request: R) => string | undefined,
): AuthError | undefined {
  if (method === "GET" || method === "HEAD") return undefined;
  const site = readHeader(request.headers, "sec-fetch-site");
  if (site === "same-origin" || site === "none") return undefined;
  const origin = readHeader(request.headers, "origin");
  if (origin !== undefined) {
    const allowed =
      config.allowedOrigins === undefined
        ? origin === ownOriginOf(request, ownOrigin)
        : config.allowedOrigins.has(origin);
    if (allowed) return undefined;
  }
  if (origin === undefined && site === undefined) {
    return crossSiteError(
      "origin_unknown",
      `Cross-site request refused: a ${method} authenticated by cookie must carry Sec-Fetch-Site or Origin`,
    );
  }
  return crossSiteError(
    "cross_site_request",
    `Cross-site request refused: a ${method} authenticated by cookie must come from an allowed origin`,
  );
}
