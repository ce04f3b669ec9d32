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

/** The origin of a request from the scheme it arrived on and its Host header, as browsers serialise origins. */
export function requestOrigin(protocol: string, host: string | undefined): string | undefined {
  if (host === undefined || host === "") return undefined;
  const scheme = protocol.endsWith(":") ? protocol.slice(0, -1) : protocol;
  const lower = host.toLowerCase();
  const defaultPort = scheme === "https" ? ":443" : scheme === "http" ? ":80" : undefined;
  const authority =
    defaultPort !== undefined && lower.endsWith(defaultPort) ? lower.slice(0, -defaultPort.length) : lower;
  return `${scheme}://${authority}`;
}

/** The origin part of an absolute URL string (`https://host:port`), without parsing all of it. */
export function originOfUrl(url: string): string {
  const authority = url.indexOf("//");
  const path = authority < 0 ? -1 : url.indexOf("/", authority + 2);
  return path < 0 ? url : url.slice(0, path);
}

/** undefined when a cookie-authenticated `method` may proceed, else the 403 `CSRF_REJECTED`. */
export function crossSiteRefusal(
  config: CsrfConfig,
  method: string,
  request: CsrfRequest,
): AuthError | undefined {
  if (method === "GET" || method === "HEAD") return undefined;
  const site = readHeader(request.headers, "sec-fetch-site");
  if (site === "same-origin" || site === "none") return undefined;
  const origin = readHeader(request.headers, "origin");
  if (origin !== undefined) {
    const allowed =
      config.allowedOrigins === undefined
        ? origin === (typeof request.origin === "function" ? request.origin() : request.origin)
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
