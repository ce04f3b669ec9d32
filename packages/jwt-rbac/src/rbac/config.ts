import { configError } from "@agent-platform/common/internal";
import type { JwtRbacOptions } from "../options.js";
import type { RbacPolicy } from "./policy.js";
import { parseScope, type ScopeAliases } from "./scopes.js";

/** The policy as resolved: the route table, public paths, admin scope, listing routes and legacy names. */
export interface PolicyConfig {
  readonly authorization: boolean;
  readonly scopeMappings: Readonly<Record<string, readonly string[]>>;
  readonly excludedRoutePaths: readonly string[];
  readonly adminScope: string;
  /** Resources whose `GET /<resource>` is a listing route. */
  readonly listingResources: ReadonlySet<string>;
  /** Legacy resource names read as current ones; undefined when none. */
  readonly scopeAliases: ScopeAliases | undefined;
  readonly unmappedRoutes: "allow" | "deny";
  readonly caseSensitiveRoutes: boolean;
}

/**
 * `policy` and the options that refine it, in this one place: `scopeMappings` adds to the policy's table (unless
 * `defaultScopeMappings: false`), `excludedRoutePaths` and `adminScope` replace the policy's. The defaults (the
 * agent platform's policy) and the listing check, whose message names a platform resource, come from the caller:
 * nothing in rbac/ names the platform.
 */
export function resolvePolicy(
  options: JwtRbacOptions,
  defaults: RbacPolicy,
  defaultAdminScope: string,
  resolveListing: (resources: RbacPolicy["listingResources"]) => ReadonlySet<string>,
): PolicyConfig {
  // Fail closed: a route nobody mapped is refused, unless the application opts into "allow".
  const unmappedRoutes = options.unmappedRoutes ?? "deny";
  if (unmappedRoutes !== "allow" && unmappedRoutes !== "deny") {
    throw configError("jwt-rbac", 'unmappedRoutes must be "allow" or "deny"');
  }
  const policy = options.policy ?? defaults;
  // The default admin scope, also for a policy that names none.
  const adminScope = options.adminScope ?? policy.adminScope ?? defaultAdminScope;
  // A scope string is split on spaces, so a scope with one could be granted only by an array claim.
  if (adminScope === "" || adminScope.includes(" ")) {
    throw configError("jwt-rbac", "adminScope must be one scope: not empty, no space");
  }
  const scopeAliases = resolveAliases(policy, options.legacyScopeAliases ?? true);
  return {
    authorization:
      options.authorization ??
      (options.scopeMappings !== undefined || options.policy?.scopeMappings !== undefined),
    scopeMappings: resolveMappings(
      (options.defaultScopeMappings ?? true) ? (policy.scopeMappings ?? {}) : {},
      options.scopeMappings,
      adminScope,
      scopeAliases,
    ),
    excludedRoutePaths: options.excludedRoutePaths ?? policy.excludedRoutePaths ?? [],
    adminScope,
    listingResources: resolveListing(policy.listingResources),
    scopeAliases,
    unmappedRoutes,
    caseSensitiveRoutes: options.caseSensitiveRoutes ?? true,
  };
}

/** Required scopes are written `resource:action` (or the admin scope); a legacy resource name is read as its current one. */
function resolveMappings(
  policy: Readonly<Record<string, readonly string[]>>,
  mappings: JwtRbacOptions["scopeMappings"],
  adminScope: string,
  aliases: ScopeAliases | undefined,
): Readonly<Record<string, readonly string[]>> {
  const merged: Record<string, readonly string[]> = { ...policy, ...mappings };
  for (const [route, scopes] of Object.entries(merged)) {
    if (!Array.isArray(scopes))
      throw configError("jwt-rbac", `scopeMappings["${route}"] must be an array of scopes`);
    merged[route] = scopes.map((scope: unknown) => {
      const parsed = typeof scope === "string" ? parseScope(scope, adminScope, aliases) : undefined;
      if (parsed === undefined || (parsed.kind === "resource" && (scope as string).split(":").length !== 2)) {
        throw configError(
          "jwt-rbac",
          `scopeMappings["${route}"]: "${String(scope)}" is not a required scope of the form "resource:action"`,
        );
      }
      return parsed.kind === "admin" ? adminScope : `${parsed.resource}:${parsed.action}`;
    });
  }
  return merged;
}

/** A resource name the scope grammar accepts (`<name>:<action>` parses). */
export function isResourceName(name: unknown): name is string {
  if (typeof name !== "string") return false;
  const parsed = parseScope(`${name}:read`, undefined);
  return parsed?.kind === "resource" && parsed.resource === name;
}

/** The policy's legacy names, unless `legacyScopeAliases: false`; each side a scope part. */
function resolveAliases(policy: RbacPolicy, enabled: boolean): ScopeAliases | undefined {
  if (!enabled || policy.scopeAliases === undefined) return undefined;
  const entries = Object.entries(policy.scopeAliases);
  for (const [legacy, current] of entries) {
    if (!isResourceName(legacy) || !isResourceName(current) || legacy === current) {
      throw configError(
        "jwt-rbac",
        `policy.scopeAliases: "${legacy}" -> "${String(current)}" must map one resource name to another`,
      );
    }
  }
  return entries.length === 0 ? undefined : new Map(entries);
}
