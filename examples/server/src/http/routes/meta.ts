import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { type RegisteredDatabase, unreachableDatabases } from "../../databases.js";
import type { AppEnv } from "../env.js";
import { ApiError } from "../errors.js";
import { ServiceUnavailableResponse } from "../schemas.js";

export const API_VERSION = "2.5.6";
export const SERVER_NAME = "agent-platform";

const rootRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "get_root",
  tags: ["Meta"],
  summary: "Server name, API version and where the docs are",
  responses: {
    200: {
      description: "About this server",
      content: {
        "application/json": {
          schema: z
            .object({ name: z.string(), version: z.string(), docs: z.string() })
            .openapi("ServerInfo", { example: { name: SERVER_NAME, version: API_VERSION, docs: "/docs" } }),
        },
      },
    },
  },
});

const healthRoute = createRoute({
  method: "get",
  path: "/health",
  operationId: "get_health",
  tags: ["Meta"],
  summary: "Whether every registered database answers",
  responses: {
    200: {
      description: "Every database answers",
      content: {
        "application/json": { schema: z.object({ status: z.literal("ok") }).openapi("HealthResponse") },
      },
    },
    503: {
      description: "At least one database does not answer; the detail names them",
      content: { "application/json": { schema: ServiceUnavailableResponse } },
    },
  },
});

export function registerMetaRoutes(
  app: OpenAPIHono<AppEnv>,
  databases: readonly RegisteredDatabase[],
  healthTimeoutMs: number,
): void {
  app.openapi(rootRoute, (c) => c.json({ name: SERVER_NAME, version: API_VERSION, docs: "/docs" }, 200));

  app.openapi(healthRoute, async (c) => {
    const failing = await unreachableDatabases(databases, healthTimeoutMs);
    if (failing.length > 0) throw new ApiError(503, `Databases not answering: ${failing.join(", ")}`);
    return c.json({ status: "ok" as const }, 200);
  });
}
