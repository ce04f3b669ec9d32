import { BEARER_SCHEME, capEcho, validationHook } from "@agent-platform/common/hono";
import type { JwtAuth } from "@agent-platform/jwt-rbac";
import type { InboxStoreCheck } from "@agent-platform/messaging";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import type { Logger } from "pino";
import { PROTECTED_RESOURCE_PATH } from "./auth.js";
import type { RegisteredDatabase } from "./databases.js";
import { type CorsSettings, corsMiddleware } from "./http/cors.js";
import { registerDocs } from "./http/docs.js";
import type { AppEnv } from "./http/env.js";
import { ApiError, ERROR_CODES, type ErrorStatus, errorResponse } from "./http/errors.js";
import { requestLogging } from "./http/logging.js";
import { documentAccess } from "./http/openapi.js";
import { registerDatabaseRoutes } from "./http/routes/databases.js";
import { API_VERSION, registerMetaRoutes } from "./http/routes/meta.js";
import { registerReadyRoute } from "./http/routes/ready.js";
import { HeadersTooLargeResponse } from "./http/schemas.js";
import type { ReadinessSources } from "./observability/readiness.js";

export interface AppDeps {
  readonly databases: readonly RegisteredDatabase[];
  /** Versions of the platform schema's migrations, in order; listed when a target is unknown. */
  readonly knownVersions: readonly string[];
  /**
   * The JWT/RBAC middleware (jwt-rbac's Hono adapter); it answers 401/403 itself. What each operation needs
   * is documented from its own tables (`auth.auth.routeAccess`).
   */
  readonly auth: MiddlewareHandler & { readonly auth: Pick<JwtAuth, "routeAccess"> };
  /** The address the server listens on (`servers` of the OpenAPI document); known once it listens. */
  readonly serverUrl: () => string;
  readonly logger: Logger;
  /** Further routes mounted at `/` (the messaging channel), merged into the OpenAPI document. */
  readonly routes?: readonly OpenAPIHono[];
  readonly healthTimeoutMs?: number;
  /** Whether the inbox can store a delivery now (`Messaging.canStore`): `/health` fails while it cannot. */
  readonly inboxCanStore?: () => Promise<InboxStoreCheck>;
  /** RFC 9728 metadata for `GET /.well-known/oauth-protected-resource`, given the request's origin. */
  readonly protectedResource?: (requestOrigin: string) => object;
  /** Browser UIs on other origins (`CORS_ALLOWED_ORIGINS`); none when absent or empty. */
  readonly cors?: CorsSettings;
  /** What `GET /ready` checks; without it, only the databases (no inbox, workers taken as running). */
  readonly readiness?: () => ReadinessSources;
  /** Run first, around everything else: the request span (tracing), the request metrics (METRICS_PORT). */
  readonly observe?: readonly MiddlewareHandler[];
}

const TITLE = "Agent Platform API";

const DOCUMENT_CONFIG = {
  openapi: "3.1.0",
  info: {
    title: TITLE,
    version: API_VERSION,
    description:
      "Reference server of the agent platform: schema migrations of the registered databases, secured by JWT bearer tokens with scope-based access control. Each protected operation lists the scopes it needs in its `security` requirement and in `x-required-scopes`.",
    license: { name: "MIT", identifier: "MIT" },
  },
  tags: [
    { name: "Meta", description: "About this server and its health" },
    { name: "Database", description: "Schema migrations of the registered databases" },
  ],
};

function isErrorStatus(status: number): status is ErrorStatus {
  return status in ERROR_CODES;
}

export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.openAPIRegistry.registerComponent("securitySchemes", BEARER_SCHEME, {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A JWT signed by a configured key; scopes in the `scopes` claim",
  });

  app.openAPIRegistry.register("HeadersTooLargeResponse", HeadersTooLargeResponse);

  for (const middleware of deps.observe ?? []) app.use("*", middleware);
  app.use("*", requestId());
  app.use("*", requestLogging(deps.logger));
  // Before authentication: a preflight carries no token, and an error answer must reach the page too.
  if (deps.cors !== undefined && deps.cors.allowedOrigins.length > 0) app.use("*", corsMiddleware(deps.cors));
  app.use("*", deps.auth);

  registerMetaRoutes(app, deps.databases, deps.healthTimeoutMs ?? 2_000, deps.inboxCanStore);
  registerReadyRoute(
    app,
    deps.readiness ?? (() => ({ databases: deps.databases, inbox: undefined, workersRunning: () => true })),
  );
  registerDatabaseRoutes(app, deps.databases, deps.knownVersions);
  for (const routes of deps.routes ?? []) app.route("/", routes);

  const { protectedResource } = deps;
  if (protectedResource !== undefined) {
    app.get(PROTECTED_RESOURCE_PATH, (c) => c.json(protectedResource(new URL(c.req.url).origin)));
  }

  let document: object | undefined;
  app.get("/openapi.json", (c) => {
    // Every route is registered and the server listens by the first request, so it is built once.
    document ??= documentAccess(
      {
        ...app.getOpenAPI31Document(DOCUMENT_CONFIG),
        servers: [{ url: deps.serverUrl(), description: "This server" }],
      },
      deps.auth.auth.routeAccess,
    );
    return c.json(document);
  });
  registerDocs(app, TITLE);

  app.notFound((c) => errorResponse(c, 404, `No route for ${capEcho(c.req.method)} ${capEcho(c.req.path)}`));

  app.onError((error, c) => {
    const logger = c.get("logger") ?? deps.logger;
    if (error instanceof ApiError) {
      if (error.status >= 500) logger.error({ detail: error.detail }, "request error");
      return errorResponse(c, error.status, error.detail, error.retryAfterSeconds);
    }
    if (error instanceof HTTPException && isErrorStatus(error.status) && error.status < 500) {
      return errorResponse(c, error.status, error.message || "Bad request");
    }
    logger.error({ err: error }, "unhandled error");
    return errorResponse(c, 500, "Internal server error");
  });

  return app;
}
