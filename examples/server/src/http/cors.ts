import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { errorResponse } from "./errors.js";

export interface CorsSettings {
  /** Exact origins, or `["*"]` for any (refused with cookies by the configuration). */
  readonly allowedOrigins: readonly string[];
  /** Cookies carry the token: answers say `Access-Control-Allow-Credentials: true`. */
  readonly credentials: boolean;
  /**
   * DPoP is on: a page may send the `DPoP` proof header, and read `DPoP-Nonce` (the nonce its next proof must
   * carry) beside `WWW-Authenticate` on every answer.
   */
  readonly dpop?: boolean;
}

/** How long a browser may reuse a preflight's answer, in seconds (Chromium caps it at 7200). */
export const CORS_MAX_AGE_S = 600;
const ALLOW_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
const ALLOW_HEADERS = ["Authorization", "Content-Type"];
// What a page may read besides the simple headers: the challenge says why a token failed.
const EXPOSE_HEADERS = ["WWW-Authenticate", "Retry-After", "X-Request-Id"];
const DPOP_ALLOW_HEADERS = [...ALLOW_HEADERS, "DPoP"];
const DPOP_EXPOSE_HEADERS = [...EXPOSE_HEADERS, "DPoP-Nonce"];

/** A CORS preflight: what a browser sends, never a request a page makes itself. */
function isPreflight(c: Context): boolean {
  return c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined;
}

/**
 * Runs before authentication, so a browser UI on an allowed origin gets its preflight answered and can
 * read every answer, errors included (a 401 "Token has expired" tells it to refresh). Hono's `cors`
 * answers preflights and adds the headers; this decides which requests it sees: only an allowed
 * origin's, and as a preflight only a real one (any other OPTIONS goes on to authentication). A
 * disallowed origin's preflight is refused with 403 and no CORS header; its other requests go on
 * unchanged, and the browser keeps their answers from the page.
 */
export function corsMiddleware(settings: CorsSettings): MiddlewareHandler {
  const anyOrigin = settings.allowedOrigins.includes("*");
  const allowed = new Set(settings.allowedOrigins);
  const exposeHeaders = settings.dpop === true ? DPOP_EXPOSE_HEADERS : EXPOSE_HEADERS;
  const isAllowed = (origin: string | undefined): origin is string =>
    origin !== undefined && (anyOrigin || allowed.has(origin));
  const answer = cors({
    origin: anyOrigin ? "*" : (origin) => (allowed.has(origin) ? origin : null),
    allowMethods: ALLOW_METHODS,
    allowHeaders: settings.dpop === true ? DPOP_ALLOW_HEADERS : ALLOW_HEADERS,
    exposeHeaders,
    maxAge: CORS_MAX_AGE_S,
    credentials: settings.credentials,
  });
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (!isAllowed(origin)) {
      if (origin !== undefined && isPreflight(c)) {
        return errorResponse(c, 403, "CORS preflight refused: this origin is not in CORS_ALLOWED_ORIGINS");
      }
      await next();
      // The answer differs by Origin: a cache must not hand it to an allowed origin's page.
      if (!anyOrigin) c.header("Vary", "Origin", { append: true });
      return;
    }
    if (c.req.method !== "OPTIONS" || isPreflight(c)) return answer(c, next);
    // An OPTIONS request a page sent itself (after its own preflight): authorized like any method.
    await next();
    c.header("Access-Control-Allow-Origin", anyOrigin ? "*" : origin);
    if (settings.credentials) c.header("Access-Control-Allow-Credentials", "true");
    c.header("Access-Control-Expose-Headers", exposeHeaders.join(","));
    if (!anyOrigin) c.header("Vary", "Origin", { append: true });
  };
}
