import { describe, expect, it } from "vitest";
import { JwtRbacConfigError } from "../errors.js";
import { compileRoute, matchRoute, normalisePath, RouteTable } from "./routes.js";

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
  it("normalises paths", () => {
    expect(normalisePath("/agents/")).toBe("/agents");
    expect(normalisePath("/agents//")).toBe("/agents");
    expect(normalisePath("/")).toBe("/");
    expect(normalisePath("/agents?x=/y#z")).toBe("/agents");
    expect(normalisePath("")).toBe("/");
  });

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
    expect(routes.match("GET", "/agents/a")?.route.value).toBe(2);
  });

  it("matches method-less patterns for any method", () => {
    const routes = new RouteTable([
      compileRoute("/health", true, false),
      compileRoute("/docs/**", true, false),
    ]);
    expect(routes.match("POST", "/health/")).toBeDefined();
    expect(routes.match("GET", "/docs/x/y")).toBeDefined();
    expect(routes.match("GET", "/healthz")).toBeUndefined();
  });

  it.each(["GET agents", "/agents", "GET /a/**/b", "GET /a*", "GET /a/{x"])(
    "refuses the pattern %j",
    (pattern) => {
      expect(() => compileRoute(pattern, 1, true)).toThrow(JwtRbacConfigError);
    },
  );
});

describe("case-insensitive tables", () => {
  it("compare literals without case and keep captured segments as they are", () => {
    const routes = new RouteTable([compileRoute("GET /Agents/*/runs", 1, true)], { caseSensitive: false });
    expect(routes.match("GET", "/AGENTS/A1/RUNS")?.params).toEqual(["A1"]);
    expect(routes.match("GET", "/agents/a1/runs")?.params).toEqual(["a1"]);
    expect(new RouteTable([compileRoute("GET /Agents", 1, true)]).match("GET", "/agents")).toBeUndefined();
  });
});
