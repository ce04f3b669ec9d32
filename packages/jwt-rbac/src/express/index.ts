import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { JWTPayload } from "jose";
import {
  type AuthResult,
  type AuthState,
  createJwtAuth,
  type JwtAuth,
  type JwtRbacOptions,
  requestOrigin,
} from "../index.js";

export type { AuthState, JwtRbacOptions } from "../index.js";

declare global {
  namespace Express {
    interface Request {
      /** Set by `jwtRbac()` from `@agent-platform/jwt-rbac/express`. */
      auth?: AuthState;
    }
  }
}

export interface ExpressJwtRbacOptions extends JwtRbacOptions {
  /** Pass the `AuthError` to `next(err)` for the app's own error handler instead of answering. */
  passError?: boolean;
}

export type ExpressJwtRbacMiddleware<C extends object = JWTPayload> = RequestHandler & {
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
      req.auth = result.state as AuthState;
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
        headers: req.headers,
        // `req.protocol` follows the app's "trust proxy" setting (X-Forwarded-Proto); the host is the Host header.
        get origin() {
          return requestOrigin(req.protocol, req.get("host"));
        },
      });
    } catch (error) {
      next(error);
      return;
    }
    // Only a real promise is awaited: a cached token goes on to the route in the same tick.
    if (result instanceof Promise) result.then((settled) => answer(req, res, next, settled), next);
    else answer(req, res, next, result);
  };
  return Object.assign(middleware, { auth });
}
