import { isAuthError } from "../errors.js";
import { type CanonicalPath, canonicalPath } from "./canonical-path.js";

/**
 * What a route needs, read from the tables a `JwtAuth` actually enforces: for documentation (an OpenAPI
 * document's `security`), so the documented scopes cannot drift from the checked ones.
 */
export interface RouteAccess {
  /** Excluded from authentication: no token needed. */
  readonly public: boolean;
  /**
   * Scopes a token needs, all of them (the admin scope always passes). Empty: any valid token. A route
   * without a mapping under `unmappedRoutes: "deny"` needs the admin scope.
   */
  readonly scopes: readonly string[];
}

export interface AccessTables {
  readonly excluded: (method: string, path: CanonicalPath) => boolean;
  /** The mapped scopes of a route, undefined when no mapping matches; undefined when authorization is off. */
  readonly required: ((method: string, path: CanonicalPath) => readonly string[] | undefined) | undefined;
  readonly unmappedRoutes: "allow" | "deny";
  readonly adminScope: string;
}

const PUBLIC: RouteAccess = Object.freeze({ public: true, scopes: Object.freeze([]) });
const ANY_TOKEN: RouteAccess = Object.freeze({ public: false, scopes: Object.freeze([]) });

/**
 * `path` is read by the same path rule as a request's, and may be an OpenAPI template
 * (`/reports/{report_id}/render`): a `{name}` segment matches a `*`. A path the rule refuses is refused
 * for every request, so it needs the admin scope here too.
 */
export function routeAccess(tables: AccessTables, method: string, text: string): RouteAccess {
  const upper = method.toUpperCase();
  const path = canonicalPath(text);
  if (isAuthError(path)) return { public: false, scopes: [tables.adminScope] };
  if (tables.excluded(upper, path)) return PUBLIC;
  if (tables.required === undefined) return ANY_TOKEN;
  const scopes = tables.required(upper, path);
  if (scopes !== undefined) return { public: false, scopes };
  return tables.unmappedRoutes === "deny" ? { public: false, scopes: [tables.adminScope] } : ANY_TOKEN;
}
