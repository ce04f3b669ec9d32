import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import type { Logger } from "pino";
import { PROTECTED_RESOURCE_PATH } from "./auth.js";
import type { PlatformDatabase } from "./databases.js";
import { renderApiReference } from "./http/docs.js";
import type { AppEnv } from "./http/env.js";
import { ApiError, ERROR_CODES, type ErrorStatus, errorResponse } from "./http/errors.js";
import { requestLogging } from "./http/logging.js";
import { BEARER_SCHEME, registerDatabaseRoutes } from "./http/routes/databases.js";
import { API_VERSION, registerMetaRoutes } from "./http/routes/meta.js";

export interface AppDeps {
  readonly databases: readonly PlatformDatabase[];
  /** Versions of the platform schema's migrations, in order; listed when a target is unknown. */
  readonly knownVersions: readonly string[];
  /** The JWT/RBAC middleware; it answers 401/403 itself. */
  readonly auth: MiddlewareHandler;
  readonly logger: Logger;
  /** Further routes mounted at `/` (the messaging channel), merged into the OpenAPI document. */
  readonly routes?: readonly OpenAPIHono[];
  readonly healthTimeoutMs?: number;
  /** RFC 9728 metadata for `GET /.well-known/oauth-protected-resource`, given the request's origin. */
  readonly protectedResource?: (requestOrigin: string) => object;
}

const DOCUMENT_CONFIG = {
  openapi: "3.1.0",
  info: {
    title: "Agent Platform API",
    version: API_VERSION,
    description:
      "Reference server of the agent platform: schema migrations of the registered databases, secured by JWT bearer tokens with scope-based access control.",
  },
};

function isErrorStatus(status: number): status is ErrorStatus {
  return status in ERROR_CODES;
}

export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const detail = result.error.issues
        .map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`)
        .join("; ");
      return errorResponse(c, 422, detail);
    },
  });

  app.openAPIRegistry.registerComponent("securitySchemes", BEARER_SCHEME, {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A JWT signed by a configured key; scopes in the `scopes` claim",
  });

  app.use("*", requestId());
  app.use("*", requestLogging(deps.logger));
  app.use("*", deps.auth);

  registerMetaRoutes(app, deps.databases, deps.healthTimeoutMs ?? 2_000);
  registerDatabaseRoutes(app, deps.databases, deps.knownVersions);
  for (const routes of deps.routes ?? []) app.route("/", routes);

  const { protectedResource } = deps;
  if (protectedResource !== undefined) {
    app.get(PROTECTED_RESOURCE_PATH, (c) => c.json(protectedResource(new URL(c.req.url).origin)));
  }

  app.doc31("/openapi.json", DOCUMENT_CONFIG);
  let docsPage: string | undefined;
  app.get("/docs", (c) => {
    // Every route is registered by the first request, so the page is rendered once.
    docsPage ??= renderApiReference(app.getOpenAPI31Document(DOCUMENT_CONFIG));
    return c.html(docsPage);
  });

  app.notFound((c) => errorResponse(c, 404, `No route for ${c.req.method} ${c.req.path}`));

  app.onError((error, c) => {
    const logger = c.get("logger") ?? deps.logger;
    if (error instanceof ApiError) {
      if (error.status >= 500) logger.error({ detail: error.detail }, "request error");
      return errorResponse(c, error.status, error.detail);
    }
    if (error instanceof HTTPException && isErrorStatus(error.status) && error.status < 500) {
      return errorResponse(c, error.status, error.message || "Bad request");
    }
    logger.error({ err: error }, "unhandled error");
    return errorResponse(c, 500, "Internal server error");
  });

  return app;
}
