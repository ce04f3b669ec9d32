import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { notReadyReasons, type ReadinessSources } from "../../observability/readiness.js";
import type { AppEnv } from "../env.js";
import { ERROR_CODES } from "../errors.js";

/** Public, like `/health`: a Kubernetes readiness probe carries no token. */
export const READY_PATH = "/ready";

const NotReadyResponse = z
  .object({
    detail: z.string(),
    error_code: z.literal(ERROR_CODES[503]),
    reasons: z.array(z.string()),
  })
  .openapi("NotReadyResponse", {
    example: {
      detail:
        "Not ready: database 'default' schema is behind: 2.5.0 < 2.5.6 (pending 2.5.6); run platform-migrate up",
      error_code: ERROR_CODES[503],
      reasons: [
        "database 'default' schema is behind: 2.5.0 < 2.5.6 (pending 2.5.6); run platform-migrate up",
      ],
    },
  });

const readyRoute = createRoute({
  method: "get",
  path: READY_PATH,
  operationId: "get_ready",
  tags: ["Meta"],
  summary: "Whether this replica may take traffic (readiness)",
  description:
    "200 when every registered database answers within 2 s and its schema is not behind the code, the inbox can store (a write, rolled back), and the messaging workers run; 503 with the reasons otherwise. `/health` stays the liveness check.",
  responses: {
    200: {
      description: "Ready",
      content: {
        "application/json": { schema: z.object({ status: z.literal("ready") }).openapi("ReadyResponse") },
      },
    },
    503: {
      description: "Not ready; `reasons` has one entry per failing check",
      content: { "application/json": { schema: NotReadyResponse } },
    },
  },
});

export function registerReadyRoute(app: OpenAPIHono<AppEnv>, sources: () => ReadinessSources): void {
  app.openapi(readyRoute, async (c) => {
    const reasons = await notReadyReasons(sources());
    if (reasons.length === 0) return c.json({ status: "ready" as const }, 200);
    return c.json({ detail: `Not ready: ${reasons.join("; ")}`, error_code: ERROR_CODES[503], reasons }, 503);
  });
}
