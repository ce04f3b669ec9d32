import { describe, expect, it } from "vitest";
import { canonical } from "../../test/fixtures/canonical.js";
import { PLATFORM_POLICY } from "../platform-policy/index.js";
import { Authorizer } from "./authorize.js";
import { hasRequiredScopes, parseScope, scopeSet } from "./scopes.js";

const ADMIN = "platform:admin";
const LISTING = new Set(PLATFORM_POLICY.listingResources);

describe("scope grammar", () => {
  it.each([
    ["agents:read", { kind: "resource", resource: "agents", action: "read", id: "*" }],
    ["agents:*:run", { kind: "resource", resource: "agents", action: "run", id: "*" }],
    ["agents:a1:run", { kind: "resource", resource: "agents", action: "run", id: "a1" }],
    ["platform:admin", { kind: "admin" }],
  ])("%s parses", (scope, expected) => {
    expect(parseScope(scope, ADMIN)).toEqual(expected);
  });

  it.each([
    "",
    "agents",
    "agents:",
    ":read",
    "agents:*",
    "*:read",
    "a:b:c:d",
    "agents::run",
    "agents: read",
    "agents:a 1:run",
  ])("%j matches nothing", (scope) => {
    expect(parseScope(scope, ADMIN)).toBeUndefined();
  });

  it("uses the configured admin scope", () => {
    expect(parseScope("root", "root")).toEqual({ kind: "admin" });
    expect(parseScope("platform:admin", "root")).toEqual({
      kind: "resource",
      resource: "platform",
      action: "admin",
      id: "*",
    });
  });
});

describe("hasRequiredScopes (agents:run on /agents/a1/runs)", () => {
  it.each([
    [["agents:run"], true],
    [["agents:*:run"], true],
    [["agents:a1:run"], true],
    [["platform:admin"], true],
    [["agents:a2:run"], false],
    [["agents:read"], false],
    [["teams:run"], false],
    [["agents:run:extra"], false],
    [[], false],
  ])("%j -> %s", (scopes, expected) => {
    expect(hasRequiredScopes(scopes, ["agents:run"], { resourceId: "a1", adminScope: ADMIN })).toBe(expected);
  });

  it("needs every required scope", () => {
    expect(hasRequiredScopes(["a:x", "b:y"], ["a:x", "b:y"])).toBe(true);
    expect(hasRequiredScopes(["a:x"], ["a:x", "b:y"])).toBe(false);
  });

  it("without a resource id, only global scopes count", () => {
    expect(hasRequiredScopes(["agents:a1:run"], ["agents:run"])).toBe(false);
  });
});

describe("Authorizer on the default table", () => {
  const authorizer = new Authorizer({
    scopeMappings: PLATFORM_POLICY.scopeMappings,
    listingResources: LISTING,
    unmappedRoutes: "allow",
    caseSensitiveRoutes: true,
  });
  const check = (method: string, path: string, scopes: string[]) => {
    const result = authorizer.authorize(method, canonical(path), scopeSet(scopes, ADMIN));
    return result instanceof Set ? [...result].sort() : (result as { detail: string }).detail;
  };

  it("lists ids for a listing route: none, never a refusal, without the read scope", () => {
    expect(check("GET", "/agents", ["agents:read"])).toEqual(["*"]);
    expect(check("GET", "/agents", ["agents:*:read"])).toEqual(["*"]);
    expect(check("GET", "/agents", ["agents:a1:read", "agents:a2:read", "teams:t1:read"])).toEqual([
      "a1",
      "a2",
    ]);
    expect(check("GET", "/teams", ["platform:admin"])).toEqual(["*"]);
    expect(check("GET", "/workflows", ["agents:read"])).toEqual([]);
    expect(check("GET", "/workflows", [])).toEqual([]);
    expect(check("POST", "/workflows", ["workflows:w1:read"])).toBe(
      "Insufficient permissions. Required scope(s): workflows:write",
    );
  });

  it("checks the id in the path", () => {
    expect(check("POST", "/agents/a1/runs/r1/cancel", ["agents:a1:run"])).toEqual([]);
    expect(check("POST", "/agents/a1/runs/r1/cancel", ["agents:a2:run"])).toBe(
      "Insufficient permissions. Required scope(s): agents:run",
    );
    expect(check("GET", "/eval-runs/e1", ["evals:e1:read"])).toEqual([]);
    expect(check("DELETE", "/sessions/s1", ["sessions:s1:delete"])).toEqual([]);
    expect(check("POST", "/databases/all/migrate", ["config:write"])).toEqual([]);
    expect(check("GET", "/databases/db1/migrations", ["config:write"])).toBe(
      "Insufficient permissions. Required scope(s): config:read",
    );
  });

  it("lets an unmapped route through, or refuses it with deny", () => {
    expect(check("GET", "/unmapped", [])).toEqual([]);
    const deny = new Authorizer({
      scopeMappings: PLATFORM_POLICY.scopeMappings,
      listingResources: LISTING,
      unmappedRoutes: "deny",
      caseSensitiveRoutes: true,
    });
    expect(deny.authorize("GET", canonical("/unmapped"), scopeSet([], ADMIN))).toMatchObject({
      status: 403,
      reason: "route_not_mapped",
      detail: "Insufficient permissions. No scope mapping for GET /unmapped: add one to scopeMappings",
    });
    expect(deny.authorize("GET", canonical("/unmapped"), scopeSet(["platform:admin"], ADMIN))).toBeInstanceOf(
      Set,
    );
  });
});
