/**
 * What an application's authorization rests on, as one value: which routes need which scopes, which
 * paths are public, which `GET /<resource>` routes list resources, which scope is the admin's, and
 * which legacy resource names still count. The core knows no route or scope of its own; the agent
 * platform's policy is `PLATFORM_POLICY`, the default of `createJwtAuth`.
 */
export interface RbacPolicy {
  /** `"<METHOD> <path>"` -> required scopes (all of them). */
  readonly scopeMappings?: Readonly<Record<string, readonly string[]>>;
  /** Path patterns (any method) that skip JWT and RBAC. */
  readonly excludedRoutePaths?: readonly string[];
  /**
   * Resources whose `GET /<resource>`, mapped to `<resource>:read`, is a listing: a valid token without
   * that scope passes with the ids it holds `<resource>:<id>:read` for (possibly none) in
   * `accessibleResourceIds`, so the handler filters instead of refusing.
   */
  readonly listingResources?: readonly string[];
  /** The scope that grants everything. */
  readonly adminScope?: string;
  /** Legacy resource name -> current one: a held `<legacy>:<action>` counts as `<current>:<action>`. */
  readonly scopeAliases?: Readonly<Record<string, string>>;
}
