/** Routes that skip JWT and RBAC unless `excludedRoutePaths` is given. */
export const DEFAULT_EXCLUDED_ROUTE_PATHS: readonly string[] = Object.freeze([
  "/",
  "/health",
  "/docs",
  "/redoc",
  "/openapi.json",
  "/docs/oauth2-redirect",
]);

/** Resources whose `GET /<resource>` is a listing route (see `accessibleResourceIds`). */
export const LISTING_RESOURCES: ReadonlySet<string> = new Set(["agents", "teams", "workflows"]);

function runnable(resource: string): Record<string, readonly string[]> {
  const read = [`${resource}:read`];
  const write = [`${resource}:write`];
  const run = [`${resource}:run`];
  return {
    [`GET /${resource}`]: read,
    [`GET /${resource}/*`]: read,
    [`POST /${resource}`]: write,
    [`PATCH /${resource}/*`]: write,
    [`DELETE /${resource}/*`]: [`${resource}:delete`],
    [`POST /${resource}/*/runs`]: run,
    [`POST /${resource}/*/runs/*/continue`]: run,
    [`POST /${resource}/*/runs/*/cancel`]: run,
  };
}

// `/<path>/*/**` also matches `/<path>/<id>`, and captures the id for `resource:<id>:action` scopes.
function crud(resource: string, path: string = resource): Record<string, readonly string[]> {
  const read = [`${resource}:read`];
  const write = [`${resource}:write`];
  const remove = [`${resource}:delete`];
  return {
    [`GET /${path}`]: read,
    [`GET /${path}/*/**`]: read,
    [`POST /${path}`]: write,
    [`POST /${path}/*/**`]: write,
    [`PUT /${path}/*/**`]: write,
    [`PATCH /${path}/*/**`]: write,
    [`DELETE /${path}`]: remove,
    [`DELETE /${path}/*/**`]: remove,
  };
}

/** The agent platform API's route -> required scopes table. `scopeMappings` entries override or extend it. */
export const DEFAULT_SCOPE_MAPPINGS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  ...runnable("agents"),
  ...runnable("teams"),
  ...runnable("workflows"),
  ...crud("sessions"),
  ...crud("memories"),
  ...crud("knowledge"),
  ...crud("evals", "eval-runs"),
  ...crud("traces"),
  ...crud("metrics"),
  ...crud("schedules"),
  "GET /config": ["config:read"],
  "GET /databases/*/migrations": ["config:read"],
  "POST /databases/*/migrate": ["config:write"],
  "POST /databases/all/migrate": ["config:write"],
});
