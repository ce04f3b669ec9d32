import { configError } from "@agent-platform/common/internal";
import { type JwtRbacOptions, TokenSource } from "../../options.js";
import { type PublicOrigin, parseOrigin } from "./public-origin.js";

/** Where a token is read from, and the origins a cookie-authenticated unsafe request may come from. */
export interface ReadingConfig {
  readonly tokenSource: TokenSource;
  readonly allowedOrigins: ReadonlySet<string> | undefined;
  /** Lower-cased. */
  readonly tokenHeaderKey: string;
  readonly tokenHeaderName: string;
  readonly cookieName: string;
}

const TOKEN_SOURCES: ReadonlySet<string> = new Set(Object.values(TokenSource));
// RFC 7230 token characters: what a header name may contain.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Each must be a serialised http(s) origin: scheme, host and port only, as an `Origin` header carries it. */
function resolveOrigins(origins: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (origins === undefined) return undefined;
  return new Set(
    origins.map((origin) => {
      let url: URL | undefined;
      try {
        url = new URL(origin);
      } catch {
        url = undefined;
      }
      if (
        url === undefined ||
        !/^https?:$/.test(url.protocol) ||
        url.origin !== origin.replace(/\/$/, "").toLowerCase()
      ) {
        throw configError(
          "jwt-rbac",
          `allowedOrigins: "${origin}" is not an origin (scheme://host[:port], http or https, no path)`,
        );
      }
      return url.origin;
    }),
  );
}

/** `tokenSource`, `tokenHeaderKey`, `cookieName` and `allowedOrigins` (cookies and CSRF). */
export function resolveReading(options: JwtRbacOptions): ReadingConfig {
  const tokenSource = options.tokenSource ?? TokenSource.HEADER;
  if (!TOKEN_SOURCES.has(tokenSource)) throw configError("jwt-rbac", `unknown tokenSource "${tokenSource}"`);
  const tokenHeaderKey = options.tokenHeaderKey ?? "Authorization";
  if (!HEADER_NAME.test(tokenHeaderKey))
    throw configError("jwt-rbac", `tokenHeaderKey "${tokenHeaderKey}" is not a header name`);
  return {
    tokenSource,
    allowedOrigins: resolveOrigins(options.allowedOrigins),
    tokenHeaderKey: tokenHeaderKey.toLowerCase(),
    tokenHeaderName: tokenHeaderKey,
    cookieName: options.cookieName ?? "access_token",
  };
}

/** The `publicOrigin` option, checked once. */
export function resolvePublicOrigin(value: unknown): PublicOrigin | undefined {
  if (value === undefined || typeof value === "function") return value as PublicOrigin | undefined;
  const origin = parseOrigin(value);
  if (origin === undefined) {
    throw configError(
      "jwt-rbac",
      `publicOrigin: ${JSON.stringify(String(value)).slice(0, 120)} is not an origin (scheme://host[:port], http or https, no path)`,
    );
  }
  return origin;
}
