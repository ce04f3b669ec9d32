import { type AuthError, insufficientScopeError, unmappedRouteError } from "../errors.js";
import { NO_IDS } from "../state.js";
import { type CanonicalPath, segmentValue } from "./canonical-path.js";
import { type RouteMatch, type RouteTable, routeTable } from "./routes.js";
import { accessibleIds, grants, type ScopeSet } from "./scopes.js";

export interface AuthorizerConfig {
  readonly scopeMappings: Readonly<Record<string, readonly string[]>>;
  /** Resources whose `GET /<resource>`, mapped to `<resource>:read`, is a listing route. */
  readonly listingResources: ReadonlySet<string>;
  readonly unmappedRoutes: "allow" | "deny";
  readonly caseSensitiveRoutes: boolean;
}

interface RouteRule {
  readonly required: readonly string[];
  /** The `resource:read` of a listing route (`GET /reports`), else undefined. */
  readonly listing: string | undefined;
}

function ruleFor(
  pattern: string,
  required: readonly string[],
  listingResources: ReadonlySet<string>,
): RouteRule {
  const [method, path] = pattern.trim().split(/\s+/, 2);
  const resource = path?.slice(1);
  const isListing =
    method?.toUpperCase() === "GET" &&
    resource !== undefined &&
    listingResources.has(resource) &&
    required.length === 1 &&
    required[0] === `${resource}:read`;
  return { required, listing: isListing ? required[0] : undefined };
}

/**
 * The resource id a scope check addresses: the segment after the resource's own name, else the first
 * captured; decoded, as the router hands it to the handler (`/reports/a%2D1` addresses `a-1`).
 */
function resourceIdFor(match: RouteMatch<RouteRule>, scope: string): string | undefined {
  const resource = scope.slice(0, scope.indexOf(":"));
  const { wildcardAfter } = match.route;
  let segment = match.params[0];
  for (let i = 0; i < wildcardAfter.length; i++) {
    if (wildcardAfter[i] === resource) {
      segment = match.params[i];
      break;
    }
  }
  return segment === undefined ? undefined : segmentValue(segment);
}

/**
 * Route -> required scopes, compiled once; answers with the listing ids or a 403. A listing route
 * (`GET /reports`) never refuses a valid token: without `reports:read` it gets the ids it holds
 * `reports:<id>:read` for, possibly none, so the handler shows an empty list, not an error page.
 */
export class Authorizer {
  readonly #routes: RouteTable<RouteRule>;
  readonly #deny: boolean;

  constructor(config: AuthorizerConfig) {
    const rules: Record<string, RouteRule> = {};
    for (const [pattern, required] of Object.entries(config.scopeMappings))
      rules[pattern] = ruleFor(pattern, required, config.listingResources);
    this.#routes = routeTable(rules, { caseSensitive: config.caseSensitiveRoutes });
    this.#deny = config.unmappedRoutes === "deny";
  }

  /** The scopes the route's mapping requires; undefined when no mapping matches. */
  required(method: string, path: CanonicalPath): readonly string[] | undefined {
    return this.#routes.match(method, path.segments)?.route.value.required;
  }

  /** The accessible resource ids (empty outside listing routes), or the refusal. */
  authorize(method: string, path: CanonicalPath, held: ScopeSet): ReadonlySet<string> | AuthError {
    const match = this.#routes.match(method, path.segments);
    if (match === undefined)
      return this.#deny && !held.admin ? unmappedRouteError(method, path.path) : NO_IDS;
    const { required, listing } = match.route.value;
    if (listing !== undefined) return accessibleIds(held, listing) ?? NO_IDS;
    for (const scope of required) {
      if (!grants(held, scope, resourceIdFor(match, scope))) return insufficientScopeError(required);
    }
    return NO_IDS;
  }
}
