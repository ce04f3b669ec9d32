import { isAuthError, type JwtRbacOptions } from "@agent-platform/jwt-rbac";
import { jwtRbac } from "@agent-platform/jwt-rbac/express";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { HttpError } from "./errors.js";
import { agentsRouter } from "./routes/agents.js";
import { AgentStore } from "./store.js";

export interface AppOptions {
  /** Passed to the adapter; without keys it falls back to JWT_VERIFICATION_KEY / JWT_JWKS_FILE. */
  readonly auth?: JwtRbacOptions;
  readonly store?: AgentStore;
}

export type App = Express & { readonly ready: Promise<void> };

/** The app: JSON body parser, the JWT/RBAC middleware, routes, and the app's own error handler. */
export function createApp({ auth = {}, store = new AgentStore() }: AppOptions = {}): App {
  const app = express();
  app.disable("x-powered-by");
  app.use(express.json({ limit: "100kb" }));

  // passError: refusals go to the error handler below, so every error of the app has one shape.
  // Route mappings match case-insensitively here, as Express routes do (the Express adapter's default).
  const authMiddleware = jwtRbac({ authorization: true, ...auth, passError: true });
  app.use(authMiddleware);

  app.get("/health", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.use(agentsRouter(store));

  app.use((_req, _res, next) => next(new HttpError(404, "NOT_FOUND", "route not found")));

  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (isAuthError(error)) {
      // The adapter built the RFC 6750 challenge and the body; keep both.
      res.status(error.status).set("WWW-Authenticate", error.wwwAuthenticate).json(error.toJSON());
      return;
    }
    if (error instanceof HttpError) {
      res.status(error.status).json({ detail: error.message, error_code: error.code });
      return;
    }
    const status = (error as { status?: unknown }).status;
    if (status === 400 || status === 413) {
      // body-parser errors: malformed JSON, body too large.
      res.status(status).json({ detail: "Invalid request body", error_code: "BAD_REQUEST" });
      return;
    }
    res.status(500).json({ detail: "Internal server error", error_code: "INTERNAL_SERVER_ERROR" });
  });

  return Object.assign(app, { ready: authMiddleware.auth.ready });
}
