import { ConfigError } from "@agent-platform/common";
import { describe, expect, it } from "vitest";
import { canonical } from "../../test/fixtures/canonical.js";
import { isAuthError } from "../errors.js";
import { canonicalPath } from "./canonical-path.js";
import { compileRoute, type RouteMatch, RouteTable, routeTable } from "./routes.js";

/** The most specific mapping for a request path, as the authenticator looks it up. */
function matchRoute<T>(
  mappings: Readonly<Record<string, T>>,
  method: string,
  path: string,
): RouteMatch<T> | undefined {
  const canonical = canonicalPath(path);
  return isAuthError(canonical) ? undefined : routeTable(mappings).match(method, canonical.segments);
}

const table = {
  "GET /agents": "list",
  "GET /agents/*": "one",
  "GET /agents/{agent_id}/runs/*": "run",
  "GET /agents/special": "special",
  "GET /files/**": "files",
  "GET /files/*/meta": "meta",
  "POST /agents/*/runs": "start",
};

const matched = (method: string, path: string) => matchRoute(table, method, path)?.route.value;

describe("route patterns", () => {
  it.each([
    ["GET", "/agents", "list"],
    ["GET", "/agents/", "list"],
    ["GET", "/agents/a1", "one"],
    ["GET", "/agents/a1?include=all", "one"],
    ["GET", "/agents/special", "special"],
    ["GET", "/agents/a1/runs/r1", "run"],
    ["POST", "/agents/a1/runs", "start"],
    ["get", "/agents/a1", "one"],
    ["HEAD", "/agents/a1", "one"],
    ["GET", "/files", "files"],
    ["GET", "/files/a/b/c", "files"],
    ["GET", "/files/a/meta", "meta"],
  ])("%s %s -> %s", (method, path, expected) => {
    expect(matched(method, path)).toBe(expected);
  });

  it.each([
    ["GET", "/Agents"],
    ["GET", "/agents/a1/extra"],
    ["GET", "/agents//runs/r1"],
    ["GET", "/agents/a%2F1"],
    ["DELETE", "/agents/a1"],
    ["GET", "/agentsx"],
  ])("%s %s matches nothing", (method, path) => {
    expect(matched(method, path)).toBeUndefined();
  });

  it("captures the wildcard segments", () => {
    expect(matchRoute(table, "GET", "/agents/a1/runs/r9")?.params).toEqual(["a1", "r9"]);
  });

  it("prefers the most specific, whatever the insertion order", () => {
    const reversed = Object.fromEntries(Object.entries(table).reverse());
    for (const [method, path] of [
      ["GET", "/agents/special"],
      ["GET", "/files/a/meta"],
      ["GET", "/agents/a1"],
    ] as const) {
      expect(matchRoute(reversed, method, path)?.route.value).toBe(matched(method, path));
    }
  });

  it("treats regex metacharacters as literals", () => {
    const routes = { "GET /a.b/(x)+": "lit" };
    expect(matchRoute(routes, "GET", "/a.b/(x)+")?.route.value).toBe("lit");
    expect(matchRoute(routes, "GET", "/aXb/xx")).toBeUndefined();
  });

  it("lets a later pattern of the same shape replace an earlier one", () => {
    const routes = new RouteTable([
      compileRoute("GET /agents/*", 1, true),
      compileRoute("GET /agents/{id}", 2, true),
    ]);
    expect(routes.match("GET", canonical("/agents/a").segments)?.route.value).toBe(2);
  });

  it("matches method-less patterns for any method", () => {
    const routes = new RouteTable([
      compileRoute("/health", true, false),
      compileRoute("/docs/**", true, false),
    ]);
    expect(routes.match("POST", canonical("/health/").segments)).toBeDefined();
    expect(routes.match("GET", canonical("/docs/x/y").segments)).toBeDefined();
    expect(routes.match("GET", canonical("/healthz").segments)).toBeUndefined();
  });

  it("compiles literals to their canonical form, so either spelling matches", () => {
    const routes = { "GET /caf%c3%a9/%7euser": "encoded", "GET /thé": "raw" };
    expect(matchRoute(routes, "GET", "/café/~user")?.route.value).toBe("encoded");
    expect(matchRoute(routes, "GET", "/th%C3%A9")?.route.value).toBe("raw");
  });

  it.each([
    "GET agents",
    "/agents",
    "GET /a/**/b",
    "GET /a*",
    "GET /a/{x",
    "GET /a/../b",
    "GET /a%2Fb",
    "GET //a",
  ])("refuses the pattern %j", (pattern) => {
    expect(() => compileRoute(pattern, 1, true)).toThrow(ConfigError);
  });
});

describe("case-insensitive tables", () => {
  it("compare literals without case and keep captured segments as they are", () => {
    const routes = new RouteTable([compileRoute("GET /Agents/*/runs", 1, true)], { caseSensitive: false });
    expect(routes.match("GET", canonical("/AGENTS/A1/RUNS").segments)?.params).toEqual(["A1"]);
    expect(routes.match("GET", canonical("/agents/a1/runs").segments)?.params).toEqual(["a1"]);
    expect(
      new RouteTable([compileRoute("GET /Agents", 1, true)]).match("GET", canonical("/agents").segments),
    ).toBeUndefined();
  });
});
