import type { MiddlewareHandler } from "hono";
import type { JWTPayload } from "jose";
import { type AuthState, createJwtAuth, type JwtAuth, type JwtRbacOptions } from "../index.js";
import { nodeRequestHeaders } from "./node-headers.js";

export type { AuthState, JwtRbacOptions } from "../index.js";

/** Context variables set by the middleware: `c.get("auth")`. */
export interface JwtRbacVariables<C extends object = JWTPayload> {
  auth: AuthState<C>;
}

export interface JwtRbacEnv<C extends object = JWTPayload> {
  Variables: JwtRbacVariables<C>;
}

export type JwtRbacMiddleware<C extends object = JWTPayload> = MiddlewareHandler<JwtRbacEnv<C>> & {
  /** The core authenticator (for `ready`, `clearCache`). */
  readonly auth: JwtAuth<C>;
};

/** Hono middleware: verifies the token, checks scopes, and sets `c.get("auth")`; errors answer as JSON. */
export function jwtRbac<C extends object = JWTPayload>(options: JwtRbacOptions = {}): JwtRbacMiddleware<C> {
  const auth = createJwtAuth<C>(options);
  const middleware: MiddlewareHandler<JwtRbacEnv<C>> = async (c, next) => {
    const result = await auth.authenticate({
      method: c.req.method,
      path: c.req.path,
      headers: nodeRequestHeaders(c.env) ?? c.req.raw.headers,
    });
    if (!result.ok) return c.body(result.error.body, result.error.status, result.error.headers);
    c.set("auth", result.state);
    await next();
  };
  return Object.assign(middleware, { auth });
}
