import { nodeHeaderReader } from "@agent-platform/common/internal";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { ParamsDictionary, Query } from "express-serve-static-core";
import type { JWTPayload } from "jose";
import {
  type AuthResult,
  type AuthState,
  createJwtAuth,
  type JwtAuth,
  type JwtRbacOptions,
} from "../index.js";

export type { AuthState, JwtRbacOptions } from "../index.js";

// Type-level only: no value is ever stored under this key.
declare const claimsType: unique symbol;

/**
 * The `Locals` type argument of Express's `Request` and `Response` that carries the claims type to
 * `req.auth`. Express's `Request` is generic in it, and its route methods infer it from the handlers, so
 * `app.get(path, jwtRbac<MyClaims>(), (req) => …)` and a handler annotated `req: JwtRbacRequest<MyClaims>`
 * both see `req.auth.claims: MyClaims`, as Hono's `JwtRbacVariables<C>` does. `res.locals` is unchanged.
 */
// biome-ignore lint/suspicious/noExplicitAny: Express's own `Locals` default, so `res.locals` reads as before
export interface JwtRbacLocals<C extends object> extends Record<string, any> {
  readonly [claimsType]: C;
}

/** The claims type a `Locals` type argument carries; jose's `JWTPayload` when it carries none. */
type ClaimsOf<L> = L extends { readonly [claimsType]: infer C extends object } ? C : JWTPayload;

/** A handler whose requests carry the claims type `C` (Express's own defaults otherwise). */
// biome-ignore lint/suspicious/noExplicitAny: Express's own defaults for the bodies, so handlers infer as usual
type ClaimsHandler<C extends object> = RequestHandler<ParamsDictionary, any, any, Query, JwtRbacLocals<C>>;

/** A request behind `jwtRbac<C>()`: annotate a handler's `req` with it when the middleware is `app.use`d. */
export type JwtRbacRequest<C extends object = JWTPayload> = Parameters<ClaimsHandler<C>>[0];

declare module "express-serve-static-core" {
  // biome-ignore lint/suspicious/noExplicitAny: an augmentation repeats Express's type parameters exactly
  interface Request<P, ResBody, ReqBody, ReqQuery, LocalsObj extends Record<string, any>> {
    /** Set by `jwtRbac()` from `@agent-platform/jwt-rbac/express`; claims typed by `JwtRbacLocals`. */
    auth?: AuthState<ClaimsOf<LocalsObj>>;
  }
}

/** Express `jwtRbac()` options: the core options and how a refusal is answered. */
export interface ExpressJwtRbacOptions extends JwtRbacOptions {
  /** Pass the `AuthError` to `next(err)` for the app's own error handler instead of answering. */
  passError?: boolean;
}

/** What Express `jwtRbac()` returns: the middleware, carrying its authenticator as `.auth`. */
export type ExpressJwtRbacMiddleware<C extends object = JWTPayload> = ClaimsHandler<C> & {
  readonly auth: JwtAuth<C>;
};

/**
 * Express 4 and 5 middleware: sets `req.auth`. Paths are relative to where it is mounted
 * (`req.baseUrl`), as the routes of a router mounted there are; the whole path is checked. Route
 * literals match case-insensitively by default, as Express routers do (`caseSensitiveRoutes: true`
 * for apps and routers created with case-sensitive routing), so `/AGENTS` cannot slip past `/agents`.
 */
export function jwtRbac<C extends object = JWTPayload>(
  options: ExpressJwtRbacOptions = {},
): ExpressJwtRbacMiddleware<C> {
  const { passError = false, caseSensitiveRoutes = false, ...coreOptions } = options;
  const auth = createJwtAuth<C>({ ...coreOptions, caseSensitiveRoutes });
  const answer = (req: Request, res: Response, next: NextFunction, result: AuthResult<C>): void => {
    if (result.ok) {
      // The claims are C by the caller's type argument; `req` here is typed without it.
      req.auth = result.state as AuthState;
      if (result.headers !== undefined)
        for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
      next();
    } else if (passError) {
      next(result.error);
    } else {
      const { error } = result;
      res.statusCode = error.status;
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
      res.end(error.body);
    }
  };
  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    let result: AuthResult<C> | Promise<AuthResult<C>>;
    try {
      // Express routes on the raw path; the mount prefix is part of what must be a valid path.
      result = auth.authenticateNow({
        method: req.method,
        path: req.baseUrl === "" ? req.path : req.baseUrl + req.path,
        basePath: req.baseUrl,
        // Over `rawHeaders`: `req.headers` keeps only the first of two Authorization headers.
        headers: nodeHeaderReader(req),
        // `req.protocol` follows the app's "trust proxy" setting (X-Forwarded-Proto). The origin is `publicOrigin` or
        // the validated Host header (never X-Forwarded-Host, nor an absolute-form target's authority).
        scheme: () => req.protocol,
        // Only its path is read: the mount prefix is in `originalUrl`, as in the proof's `htu`.
        url: () => req.originalUrl,
      });
    } catch (error) {
      next(error);
      return;
    }
    // Only a real promise is awaited: a cached token goes on to the route in the same tick.
    if (result instanceof Promise) result.then((settled) => answer(req, res, next, settled), next);
    else answer(req, res, next, result);
  };
  // The handler is typed for any request; the middleware's type carries C to the handlers after it.
  return Object.assign(middleware as ClaimsHandler<C>, { auth });
}
