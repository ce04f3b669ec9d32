import { BEARER_SCHEME } from "@agent-platform/common/hono";
import type { RouteAccess } from "@agent-platform/jwt-rbac";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

interface Operation {
  operationId?: string;
  responses?: Record<string, unknown>;
  description?: string;
  security?: Record<string, string[]>[];
  "x-required-scopes"?: string[];
}

interface Document {
  paths?: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
}

const HEADERS_TOO_LARGE = {
  description: "Request headers (with the URL) larger than the server accepts",
  content: { "application/json": { schema: { $ref: "#/components/schemas/HeadersTooLargeResponse" } } },
};

/** `get_whatsapp_status` for `GET /whatsapp/status`: for operations their module left without an id. */
function fallbackOperationId(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((segment) => segment !== "")
    .map((segment) => segment.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+/g, "_"));
  return [method, ...words].join("_");
}

/**
 * Writes into every operation what the JWT middleware in force requires of it, read from jwt-rbac's own
 * tables (`routeAccess`), never from a copy here:
 *
 * - a public operation (excluded from JWT): `security: []`;
 * - a protected one: `security: [{ HTTPBearer: [<scopes>] }]` (OpenAPI 3.1 allows scopes, as role names,
 *   on a non-OAuth scheme), the same list as `x-required-scopes`, and a sentence in the description for
 *   renderers that show neither. An empty list means any valid token.
 *
 * Also gives an `operationId` to an operation registered without one, and documents the 431 every
 * operation can answer (from the HTTP layer, see `client-error.ts`).
 */
export function documentAccess<T extends Document>(
  document: T,
  routeAccess: (method: string, path: string) => RouteAccess,
): T {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      operation.operationId ??= fallbackOperationId(method, path);
      operation.responses = { ...operation.responses, "431": HEADERS_TOO_LARGE };
      const access = routeAccess(method, path);
      if (access.public) {
        operation.security = [];
        continue;
      }
      const scopes = [...access.scopes];
      operation.security = [{ [BEARER_SCHEME]: scopes }];
      operation["x-required-scopes"] = scopes;
      const needs =
        scopes.length === 0
          ? "Requires a valid bearer token."
          : `Requires a bearer token with scope${scopes.length === 1 ? "" : "s"} ${scopes.map((scope) => `\`${scope}\``).join(", ")}.`;
      operation.description =
        operation.description === undefined ? needs : `${operation.description}\n\n${needs}`;
    }
  }
  return document;
}
