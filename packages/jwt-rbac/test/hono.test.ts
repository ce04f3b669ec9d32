import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JwtRbacVariables, jwtRbac } from "../src/hono/index.js";
import { sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { serveFetchApp, type TestServer } from "./fixtures/servers.js";

describe("Hono adapter: typed c.get('auth')", () => {
  let keys: TestKeys;
  let server: TestServer;

  beforeAll(async () => {
    keys = await testKeys();
    const middleware = jwtRbac<{ sub: string; tenant: string }>({
      algorithm: "HS256",
      verificationKeys: [keys.hsSecret],
      scopeMappings: { "GET /me": [] },
    });
    await middleware.auth.ready;
    const app = new Hono<{ Variables: JwtRbacVariables<{ sub: string; tenant: string }> }>();
    app.use(middleware);
    app.get("/me", (c) => {
      const auth = c.get("auth");
      return c.json({ tenant: auth.authenticated ? auth.claims.tenant : null, user: auth.userId });
    });
    app.get("/health", (c) => c.json({ authenticated: c.get("auth").authenticated }));
    server = await serveFetchApp(app.fetch);
  });
  afterAll(() => server.close());

  it("hands typed claims to the route", async () => {
    const token = await sign({ sub: "u1", tenant: "t1" }, "HS256", keys.hsSecret);
    const response = await fetch(`${server.url}/me`, { headers: { Authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ tenant: "t1", user: "u1" });
  });

  it("marks excluded routes as anonymous", async () => {
    const response = await fetch(`${server.url}/health`);
    expect(await response.json()).toEqual({ authenticated: false });
  });

  it("answers a missing token itself", async () => {
    const response = await fetch(`${server.url}/me`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="platform"');
    expect(await response.json()).toEqual({
      detail: "Authorization header missing",
      error_code: "UNAUTHENTICATED",
    });
  });
});
