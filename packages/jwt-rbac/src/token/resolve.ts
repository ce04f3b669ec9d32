import { type AuthError, invalidTokenError, missingTokenError } from "../errors.js";
import { TokenSource } from "../options.js";

/** Request headers as a Fetch `Headers` (or anything with `get`) or a plain record (Node's `req.headers`). */
export type HeadersInput =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface TokenSourceConfig {
  readonly tokenSource: TokenSource;
  /** Lower-cased. */
  readonly tokenHeaderKey: string;
  /** As configured, for messages. */
  readonly tokenHeaderName: string;
  readonly cookieName: string;
}

/** Case-insensitive header lookup; repeated headers are joined the way Fetch joins them. */
export function readHeader(headers: HeadersInput, lowerName: string): string | undefined {
  if (typeof headers.get === "function")
    return (headers as { get(name: string): string | null }).get(lowerName) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[lowerName];
  if (value === undefined) {
    for (const name in record) {
      if (name.toLowerCase() === lowerName) {
        value = record[name];
        break;
      }
    }
  }
  return typeof value === "string" || value === undefined ? value : value.join(", ");
}

/** The value of one cookie from a raw `Cookie` header (RFC 6265 syntax; first occurrence wins). */
export function readCookie(cookieHeader: string, name: string): string | undefined {
  let start = 0;
  while (start < cookieHeader.length) {
    let end = cookieHeader.indexOf(";", start);
    if (end < 0) end = cookieHeader.length;
    const eq = cookieHeader.indexOf("=", start);
    if (eq > start && eq < end && cookieHeader.slice(start, eq).trim() === name) {
      let value = cookieHeader.slice(eq + 1, end).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      return value;
    }
    start = end + 1;
  }
  return undefined;
}

function fromHeader(value: string): string | AuthError {
  const space = value.indexOf(" ");
  if (space < 0 || value.slice(0, space).toLowerCase() !== "bearer") {
    return invalidTokenError("invalid_scheme", "Invalid token: authorization scheme must be Bearer");
  }
  const token = value.slice(space + 1).trim();
  return token === "" ? invalidTokenError("malformed", "Invalid token: malformed JWT") : token;
}

/** The raw token of a request, or why there is none. Never looks inside the token. */
export function resolveToken(
  config: TokenSourceConfig,
  headers: HeadersInput,
  cookies: Readonly<Record<string, string | undefined>> | undefined,
): string | AuthError {
  const { tokenSource, cookieName } = config;
  if (tokenSource !== TokenSource.COOKIE) {
    const header = readHeader(headers, config.tokenHeaderKey);
    if (header !== undefined) return fromHeader(header);
  }
  if (tokenSource !== TokenSource.HEADER) {
    let cookie = cookies?.[cookieName];
    if (cookie === undefined && cookies === undefined) {
      const cookieHeader = readHeader(headers, "cookie");
      if (cookieHeader !== undefined) cookie = readCookie(cookieHeader, cookieName);
    }
    if (cookie !== undefined && cookie !== "") return cookie;
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
