import type { InboxStoreCheck } from "@agent-platform/messaging";
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
  summary: "Whether every registered database answers and the inbox can store",
  responses: {
    200: {
      description: "Every database answers and the inbox can store a delivery",
      content: {
        "application/json": { schema: z.object({ status: z.literal("ok") }).openapi("HealthResponse") },
      },
    },
    503: {
      description:
        "A database does not answer, or the inbox cannot store (read-only, out of connection slots, disk full); the detail says which",
      content: { "application/json": { schema: ServiceUnavailableResponse } },
    },
  },
});

export function registerMetaRoutes(
  app: OpenAPIHono<AppEnv>,
  databases: readonly RegisteredDatabase[],
  healthTimeoutMs: number,
  inboxCanStore?: () => Promise<InboxStoreCheck>,
): void {
  app.openapi(rootRoute, (c) => c.json({ name: SERVER_NAME, version: API_VERSION, docs: "/docs" }, 200));

  app.openapi(healthRoute, async (c) => {
    // Answering `SELECT 1` is not enough: a read-only database answers it while every delivery gets 503.
    const [failing, inbox] = await Promise.all([
      unreachableDatabases(databases, healthTimeoutMs),
      inboxCanStore?.() ?? { ok: true as const },
    ]);
    // Both, when both fail: the inbox's reason says why its database does not answer (e.g. no connection slot).
    const problems = [
      ...(failing.length > 0 ? [`Databases not answering: ${failing.join(", ")}`] : []),
      ...(inbox.ok ? [] : [`the inbox cannot store deliveries: ${inbox.reason}`]),
    ];
    if (problems.length > 0) {
      const detail = problems.join("; ");
      throw new ApiError(503, `${detail.charAt(0).toUpperCase()}${detail.slice(1)}`);
    }
    return c.json({ status: "ok" as const }, 200);
  });
}
