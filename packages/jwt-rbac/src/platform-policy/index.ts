import type { RbacPolicy } from "../rbac/policy.js";
import {
  hasRequiredScopes as hasScopes,
  type ParsedScope,
  parseScope as parse,
  type ScopeAliases,
} from "../rbac/scopes.js";

/**
 * The agent platform's own policy (interface 2.5.6): its route table, public paths, listing routes,
 * admin scope and legacy scope names, in one place. `createJwtAuth` applies it unless given another
 * `policy`; a generic app passes its own and never meets a platform route or scope.
 */

/** The admin scope (the platform's `agent_os:admin`, with the product word replaced by `platform`). */
export const PLATFORM_ADMIN_SCOPE = "platform:admin";

/** Public: the platform's health, home and API documentation. */
export const PLATFORM_EXCLUDED_ROUTE_PATHS: readonly string[] = Object.freeze([
  "/",
  "/health",
  "/docs",
  "/redoc",
  "/openapi.json",
  "/docs/oauth2-redirect",
]);

/** `GET /agents`, `/teams`, `/workflows` list what the token may read (see `RbacPolicy.listingResources`). */
export const PLATFORM_LISTING_RESOURCES: readonly string[] = Object.freeze(["agents", "teams", "workflows"]);

/** The platform renamed `system:*` to `config:*` after 2.5.6 and still accepts the old names. */
export const PLATFORM_SCOPE_ALIASES: Readonly<Record<string, string>> = Object.freeze({ system: "config" });

/**
 * The 2.5.6 table route for route, `system:*` written `config:*`. The platform matches patterns with
 * `fnmatch`, whose trailing `*` also matches deeper paths (`GET /sessions/*` covers
 * `/sessions/s1/runs`), so a trailing `/*` is written `/*` + `/**` here; `*` captures the id that
 * `resource:<id>:action` scopes address. The last three routes are this project's own.
 */
export const PLATFORM_SCOPE_MAPPINGS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  "GET /config": ["config:read"],
  "GET /models": ["config:read"],

  "GET /agents": ["agents:read"],
  "GET /agents/*/**": ["agents:read"],
  "POST /agents": ["agents:write"],
  "PATCH /agents/*/**": ["agents:write"],
  "DELETE /agents/*/**": ["agents:delete"],
  "POST /agents/*/runs": ["agents:run"],
  "POST /agents/*/runs/*/continue": ["agents:run"],
  "POST /agents/*/runs/*/cancel": ["agents:run"],

  "GET /teams": ["teams:read"],
  "GET /teams/*/**": ["teams:read"],
  "POST /teams": ["teams:write"],
  "PATCH /teams/*/**": ["teams:write"],
  "DELETE /teams/*/**": ["teams:delete"],
  "POST /teams/*/runs": ["teams:run"],
  "POST /teams/*/runs/*/continue": ["teams:run"],
  "POST /teams/*/runs/*/cancel": ["teams:run"],

  "GET /workflows": ["workflows:read"],
  "GET /workflows/*/**": ["workflows:read"],
  "POST /workflows": ["workflows:write"],
  "PATCH /workflows/*/**": ["workflows:write"],
  "DELETE /workflows/*/**": ["workflows:delete"],
  "POST /workflows/*/runs": ["workflows:run"],
  "POST /workflows/*/runs/*/continue": ["workflows:run"],
  "POST /workflows/*/runs/*/cancel": ["workflows:run"],

  "GET /sessions": ["sessions:read"],
  "GET /sessions/*/**": ["sessions:read"],
  "POST /sessions": ["sessions:write"],
  "POST /sessions/*/rename": ["sessions:write"],
  "PATCH /sessions/*/**": ["sessions:write"],
  "DELETE /sessions": ["sessions:delete"],
  "DELETE /sessions/*/**": ["sessions:delete"],

  "GET /memories": ["memories:read"],
  "GET /memories/*/**": ["memories:read"],
  "GET /memory_topics": ["memories:read"],
  "GET /user_memory_stats": ["memories:read"],
  "POST /memories": ["memories:write"],
  "PATCH /memories/*/**": ["memories:write"],
  "DELETE /memories": ["memories:delete"],
  "DELETE /memories/*/**": ["memories:delete"],
  "POST /optimize-memories": ["memories:write"],

  "GET /knowledge/content": ["knowledge:read"],
  "GET /knowledge/content/*/**": ["knowledge:read"],
  "GET /knowledge/config": ["knowledge:read"],
  "POST /knowledge/content": ["knowledge:write"],
  "PATCH /knowledge/content/*/**": ["knowledge:write"],
  "POST /knowledge/search": ["knowledge:read"],
  "DELETE /knowledge/content": ["knowledge:delete"],
  "DELETE /knowledge/content/*/**": ["knowledge:delete"],

  "GET /metrics": ["metrics:read"],
  "POST /metrics/refresh": ["metrics:write"],

  "GET /eval-runs": ["evals:read"],
  "GET /eval-runs/*/**": ["evals:read"],
  "POST /eval-runs": ["evals:write"],
  "PATCH /eval-runs/*/**": ["evals:write"],
  "DELETE /eval-runs": ["evals:delete"],

  "GET /traces": ["traces:read"],
  "GET /traces/*/**": ["traces:read"],
  "GET /trace_session_stats": ["traces:read"],

  "GET /schedules": ["schedules:read"],
  "GET /schedules/*/**": ["schedules:read"],
  "POST /schedules": ["schedules:write"],
  "PATCH /schedules/*/**": ["schedules:write"],
  "DELETE /schedules/*/**": ["schedules:delete"],
  "POST /schedules/*/enable": ["schedules:write"],
  "POST /schedules/*/disable": ["schedules:write"],
  "POST /schedules/*/trigger": ["schedules:write"],
  "GET /schedules/*/runs": ["schedules:read"],
  "GET /schedules/*/runs/*/**": ["schedules:read"],

  "GET /approvals": ["approvals:read"],
  "GET /approvals/count": ["approvals:read"],
  "GET /approvals/*/**": ["approvals:read"],
  "GET /approvals/*/status": ["approvals:read"],
  "POST /approvals/*/resolve": ["approvals:write"],
  "DELETE /approvals/*/**": ["approvals:delete"],

  "GET /databases/*/migrations": ["config:read"],
  "POST /databases/*/migrate": ["config:write"],
  "POST /databases/all/migrate": ["config:write"],
});

/** The agent platform's policy: the default of `createJwtAuth` and every adapter. */
export const PLATFORM_POLICY: Required<RbacPolicy> = Object.freeze({
  scopeMappings: PLATFORM_SCOPE_MAPPINGS,
  excludedRoutePaths: PLATFORM_EXCLUDED_ROUTE_PATHS,
  listingResources: PLATFORM_LISTING_RESOURCES,
  adminScope: PLATFORM_ADMIN_SCOPE,
  scopeAliases: PLATFORM_SCOPE_ALIASES,
});

const PLATFORM_ALIASES: ScopeAliases = new Map(Object.entries(PLATFORM_SCOPE_ALIASES));

/** Parses one scope by the grammar (see docs/scopes.md); the admin scope defaults to the platform's. */
export function parseScope(
  scope: string,
  adminScope: string = PLATFORM_ADMIN_SCOPE,
): ParsedScope | undefined {
  return parse(scope, adminScope);
}

/**
 * Whether `scopes` meet every `required` scope, read as the platform reads them (its admin scope and
 * legacy names, unless given others). `resourceId` is the id the route addresses (`a1` in `/agents/a1/runs`).
 */
export function hasRequiredScopes(
  scopes: readonly string[],
  required: readonly string[],
  options: { resourceId?: string | undefined; adminScope?: string } = {},
): boolean {
  return hasScopes(scopes, required, {
    resourceId: options.resourceId,
    adminScope: options.adminScope ?? PLATFORM_ADMIN_SCOPE,
    aliases: PLATFORM_ALIASES,
  });
}
