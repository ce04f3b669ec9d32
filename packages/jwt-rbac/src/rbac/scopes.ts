import { getOrCreate } from "../get-or-create.js";
/**
 * Scope grammar:
 * - `resource:action`       global, every resource of the type
 * - `resource:*:action`     every resource of the type (same reach as global)
 * - `resource:<id>:action`  one resource
 * - the admin scope         everything (none when undefined)
 * A resource named in `aliases` (legacy name -> current) is read as its current name.
 * Anything else (empty parts, more parts, whitespace) matches nothing.
 */
export type ParsedScope =
  | { readonly kind: "admin" }
  | { readonly kind: "resource"; readonly resource: string; readonly action: string; readonly id: string };

/** `id` of a global scope. */
export const ANY_ID = "*";
const ALL_IDS: ReadonlySet<string> = new Set([ANY_ID]);

function isPart(part: string | undefined): part is string {
  if (part === undefined || part === "" || part === ANY_ID) return false;
  for (let i = 0; i < part.length; i++) {
    const code = part.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return false;
  }
  return true;
}

/** Legacy resource name -> current one. */
export type ScopeAliases = ReadonlyMap<string, string>;

/** A scope string read as global, per-resource or admin (legacy names through `aliases`); `undefined` when it is none. */
export function parseScope(
  scope: string,
  adminScope: string | undefined,
  aliases?: ScopeAliases,
): ParsedScope | undefined {
  if (scope === adminScope) return { kind: "admin" };
  const parts = scope.split(":");
  const current = (resource: string) => aliases?.get(resource) ?? resource;
  if (parts.length === 2) {
    const [resource, action] = parts;
    return isPart(resource) && isPart(action)
      ? { kind: "resource", resource: current(resource), action, id: ANY_ID }
      : undefined;
  }
  if (parts.length === 3) {
    const [resource, id, action] = parts;
    if (!isPart(resource) || !isPart(action) || id === undefined) return undefined;
    return id === ANY_ID || isPart(id)
      ? { kind: "resource", resource: current(resource), action, id }
      : undefined;
  }
  return undefined;
}

/** A user's scopes, parsed once per verified token. */
export interface ScopeSet {
  readonly admin: boolean;
  /** `"resource:action"` -> ids it is granted for (`*` for all). */
  readonly grants: ReadonlyMap<string, ReadonlySet<string>>;
}

export function scopeSet(
  scopes: readonly string[],
  adminScope: string | undefined,
  aliases?: ScopeAliases,
): ScopeSet {
  let admin = false;
  const grants = new Map<string, Set<string>>();
  for (const scope of scopes) {
    const parsed = parseScope(scope, adminScope, aliases);
    if (parsed === undefined) continue;
    if (parsed.kind === "admin") {
      admin = true;
      continue;
    }
    const key = `${parsed.resource}:${parsed.action}`;
    getOrCreate(grants, key, () => new Set<string>()).add(parsed.id);
  }
  return { admin, grants };
}

/** Whether `held` grants one required `resource:action`, for `resourceId` when the route names one. */
export function grants(held: ScopeSet, required: string, resourceId: string | undefined): boolean {
  if (held.admin) return true;
  const ids = held.grants.get(required);
  if (ids === undefined) return false;
  return ids.has(ANY_ID) || (resourceId !== undefined && ids.has(resourceId));
}

/**
 * Whether every required scope holds. `resourceId` is the id the route addresses (`r1` in
 * `/reports/r1/render`); without one, only global, `resource:*:action` and admin scopes count.
 */
export function hasRequiredScopes(
  scopes: readonly string[] | ScopeSet,
  required: readonly string[],
  options: { resourceId?: string | undefined; adminScope?: string | undefined; aliases?: ScopeAliases } = {},
): boolean {
  const held = Array.isArray(scopes)
    ? scopeSet(scopes as readonly string[], options.adminScope, options.aliases)
    : (scopes as ScopeSet);
  return required.every((scope) => grants(held, scope, options.resourceId));
}

/**
 * For a listing route needing `resource:read`: `{"*"}` when held globally (or admin), the ids held
 * otherwise, `undefined` when none at all.
 */
export function accessibleIds(held: ScopeSet, required: string): ReadonlySet<string> | undefined {
  if (held.admin) return ALL_IDS;
  const ids = held.grants.get(required);
  if (ids === undefined || ids.size === 0) return undefined;
  return ids.has(ANY_ID) ? ALL_IDS : ids;
}
