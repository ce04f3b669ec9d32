import type { Context, MiddlewareHandler, Next } from "hono";
import { basePath, baseRoutePath } from "hono/route";
import type { JWTPayload } from "jose";
import {
  type AuthResult,
  type AuthState,
  createJwtAuth,
  type JwtAuth,
  type JwtRbacOptions,
} from "../index.js";
import { connectionScheme, schemeOf } from "../token/index.js";
import { nodeRequestHeaders } from "./node-headers.js";

export type { AuthState, JwtRbacOptions } from "../index.js";

/** Context variables set by the middleware: `c.get("auth")`. */
export interface JwtRbacVariables<C extends object = JWTPayload> {
  auth: AuthState<C>;
}

/** The Hono `Env` of an app using the middleware: `c.get("auth")` is the request's `AuthState`. */
export interface JwtRbacEnv<C extends object = JWTPayload> {
  Variables: JwtRbacVariables<C>;
}

/** What `jwtRbac()` returns: the Hono middleware, carrying its authenticator as `.auth`. */
export type JwtRbacMiddleware<C extends object = JWTPayload> = MiddlewareHandler<JwtRbacEnv<C>> & {
  /** The core authenticator (for `ready`, `clearCache`). */
  readonly auth: JwtAuth<C>;
};

function proceed<C extends object>(
  c: Context<JwtRbacEnv<C>>,
  next: Next,
  result: AuthResult<C>,
): Promise<Response | undefined> {
  if (!result.ok)
    return Promise.resolve(c.body(result.error.body, result.error.status, result.error.headers));
  c.set("auth", result.state);
  if (result.headers !== undefined)
    for (const [name, value] of Object.entries(result.headers)) c.header(name, value);
  return next() as Promise<undefined>;
}

/**
 * The path the app the middleware is registered in is mounted at, with its parameters filled in: `basePath(c)`,
 * whose per-context WeakMap entry kept each request alive longer (bench/notes/profiles.md, "Why the code is as it
 * is"). A mount path without parameters or wildcards, the usual case, is its own answer and is read as is.
 */
function mountPath(c: Context): string {
  const route = baseRoutePath(c);
  return route.includes(":") || route.includes("*") ? basePath(c) : route;
}

/**
 * Hono middleware: verifies the token, checks scopes, and sets `c.get("auth")`; errors answer as JSON.
 * It decides on the path Hono routes on (`c.req.path`, already through decodeURI), relative to the
 * app it is registered in: under `app.route("/api", sub)` or `basePath("/v1")`, `/api/agents` is
 * matched as `/agents`, as the sub-app's own routes are.
 */
export function jwtRbac<C extends object = JWTPayload>(options: JwtRbacOptions = {}): JwtRbacMiddleware<C> {
  const auth = createJwtAuth<C>(options);
  // Not `async`: a cached token is answered without a promise hop, and only a real promise is awaited.
  const middleware: MiddlewareHandler<JwtRbacEnv<C>> = (c, next) => {
    const result = auth.authenticateNow({
      method: c.req.method,
      path: c.req.path,
      basePath: mountPath(c),
      headers: nodeRequestHeaders(c.env) ?? c.req.raw.headers,
      // On Node, the connection's scheme; elsewhere the runtime's URL's. The origin is `publicOrigin` or the
      // validated Host header, never the authority of an absolute-form target (which `c.req.url` may carry).
      scheme: () => connectionScheme(c.env) ?? schemeOf(c.req.url),
      // Only its path is read: the one Hono routes on, mount prefix included.
      url: () => c.req.url,
    });
    if (result instanceof Promise) return result.then((settled) => proceed(c, next, settled));
    return proceed(c, next, result);
  };
  return Object.assign(middleware, { auth });
}
