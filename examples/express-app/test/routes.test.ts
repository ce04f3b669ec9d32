import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";
import { listen } from "./listen.js";

// jwt-rbac denies routes no scope mapping covers: every route of the app must be public or mapped,
// or it is closed to everyone but the admin scope. The routes are read from the app's own router.

const SECRET = "express-app-routes-test-secret-0123456789";

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  slash?: boolean;
}

/** [METHOD, path] of every route, descending into routers mounted at "/". */
function routesOf(stack: readonly Layer[]): [string, string][] {
  return stack.flatMap((layer): [string, string][] => {
    if (layer.route !== undefined) {
      const { path, methods } = layer.route;
      return Object.keys(methods).map((method) => [method.toUpperCase(), path.replace(/:\w+/g, "x")]);
    }
    if (layer.handle?.stack === undefined) return [];
    // A router mounted below a prefix would need the prefix prepended; this app has none.
    if (layer.slash !== true) throw new Error("a router mounted below a prefix: extend routesOf");
    return routesOf(layer.handle.stack);
  });
}

describe("express-app routes and the deny-by-default table", () => {
  let app: App;
  let url: string;
  let close: () => void;
  beforeAll(async () => {
    app = createApp({ auth: { algorithm: "HS256", verificationKeys: [SECRET] } });
    ({ url, close } = await listen(app));
  });
  afterAll(() => close());

  it("maps or excludes every route", async () => {
    const routes = routesOf((app as unknown as { router: { stack: Layer[] } }).router.stack);
    expect(routes.length).toBeGreaterThanOrEqual(6);
    const token = await new SignJWT({ sub: "u1", scopes: [] })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(SECRET));
    const detailOf = async (method: string, path: string) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}` },
      });
      const text = await response.text();
      return text === "" ? "" : String((JSON.parse(text) as { detail?: unknown }).detail);
    };
    for (const [method, path] of routes) {
      expect(await detailOf(method, path), `${method} ${path}`).not.toMatch(/No scope mapping/);
    }
    // The check can fail: a route nobody mapped is refused, naming it.
    expect(await detailOf("GET", "/unmapped")).toBe(
      "Insufficient permissions. No scope mapping for GET /unmapped: add one to scopeMappings",
    );
  });
});
