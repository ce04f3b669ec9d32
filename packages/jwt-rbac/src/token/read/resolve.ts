import {
  type AuthError,
  invalidTokenError,
  missingTokenError,
  repeatedCredentialsError,
} from "../../errors.js";
import { TokenSource } from "../../options.js";
import { type CsrfConfig, type CsrfRequest, crossSiteRefusal } from "./csrf.js";
import { readHeader } from "./headers.js";

export interface TokenSourceConfig extends CsrfConfig {
  readonly tokenSource: TokenSource;
  /** Lower-cased. */
  readonly tokenHeaderKey: string;
  /** As configured, for messages. */
  readonly tokenHeaderName: string;
  readonly cookieName: string;
}

const isOws = (code: number) => code === 0x20 || code === 0x09;

/**
 * `value[start, end)` without HTTP whitespace (SP, HTAB) at either end; `String.prototype.trim` would also strip
 * NBSP, U+FEFF and the like. No slice when there is nothing to strip (a token: a regex replace cost more).
 */
function trimOws(value: string, start = 0, end = value.length): string {
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** What `readCookie` answers for a `Cookie` header that names the cookie more than once. */
export const REPEATED_COOKIE: unique symbol = Symbol("repeated cookie");

/**
 * The value of one cookie from a raw `Cookie` header (RFC 6265 syntax), or `REPEATED_COOKIE` when the name
 * occurs twice: a sibling subdomain can set a second cookie of the same name (cookie tossing), and which
 * one comes first depends on the browser, so neither is trusted.
 */
export function readCookie(cookieHeader: string, name: string): string | undefined | typeof REPEATED_COOKIE {
  let found: string | undefined;
  let start = 0;
  while (start < cookieHeader.length) {
    let end = cookieHeader.indexOf(";", start);
    if (end < 0) end = cookieHeader.length;
    const eq = cookieHeader.indexOf("=", start);
    if (eq > start && eq < end && trimOws(cookieHeader, start, eq) === name) {
      let value = trimOws(cookieHeader, eq + 1, end);
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (found !== undefined) return REPEATED_COOKIE;
      found = value;
    }
    start = end + 1;
  }
  return found;
}

function fromHeader(value: string, headerName: string): string | AuthError {
  // A token is base64url and dots: a comma is where `Headers` (and the Node adapters) join a repeated header.
  if (value.includes(",")) {
    return repeatedCredentialsError(
      `Invalid request: the ${headerName} header must be sent once, with one token`,
    );
  }
  const space = value.indexOf(" ");
  if (space < 0 || value.slice(0, space).toLowerCase() !== "bearer") {
    return invalidTokenError("invalid_scheme", "Invalid token: authorization scheme must be Bearer");
  }
  const token = trimOws(value, space + 1);
  return token === "" ? invalidTokenError("malformed", "Invalid token: malformed JWT") : token;
}

export interface TokenRequest extends CsrfRequest {
  /** Parsed cookies, if the framework has them; otherwise the `Cookie` header is read. */
  readonly cookies?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * The raw token of a request, or why there is none. Never looks inside the token. A token from a
 * cookie counts only for a request that is not a cross-site forgery (see csrf.ts); `ownOrigin` answers the
 * request's own origin for that check when the request does not carry one.
 */
export function resolveToken<R extends TokenRequest>(
  config: TokenSourceConfig,
  method: string,
  request: R,
  ownOrigin?: (request: R) => string | undefined,
): string | AuthError {
  const { tokenSource, cookieName } = config;
  const { headers, cookies } = request;
  if (tokenSource !== TokenSource.COOKIE) {
    const header = readHeader(headers, config.tokenHeaderKey);
    if (header !== undefined) return fromHeader(header, config.tokenHeaderName);
  }
  if (tokenSource !== TokenSource.HEADER) {
    let cookie = cookies?.[cookieName];
    if (cookie === undefined && cookies === undefined) {
      const cookieHeader = readHeader(headers, "cookie");
      const read = cookieHeader === undefined ? undefined : readCookie(cookieHeader, cookieName);
      if (read === REPEATED_COOKIE) {
        return repeatedCredentialsError(`Invalid request: the '${cookieName}' cookie must be sent once`);
      }
      cookie = read;
    }
    if (cookie !== undefined && cookie !== "")
      return crossSiteRefusal(config, method, request, ownOrigin) ?? cookie;
  }
  switch (tokenSource) {
    case TokenSource.COOKIE:
      return missingTokenError(`JWT cookie '${cookieName}' missing`);
    case TokenSource.BOTH:
      return missingTokenError(
        `JWT missing from both the ${config.tokenHeaderName} header and the '${cookieName}' cookie`,
      );
    default:
      return missingTokenError(`${config.tokenHeaderName} header missing`);
  }
}
