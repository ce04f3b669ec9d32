import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { AgentStore } from "../src/store.js";
import { listen } from "./listen.js";

const SECRET = "express-app-test-secret-0123456789abcdef";
const sign = (claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(SECRET));

describe("express-app over HTTP", () => {
  let url: string;
  let close: () => void;

  beforeAll(async () => {
    const store = new AgentStore();
    store.create("alpha", "u0", "a1");
    store.create("beta", "u0", "a2");
    const app = createApp({
      store,
      auth: { algorithm: "HS256", verificationKeys: [SECRET], scopeMappings: { "GET /health": [] } },
    });
    ({ url, close } = await listen(app));
  });
  afterAll(() => close());

  const call = async (method: string, path: string, scopes?: string[] | "none", body?: unknown) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (scopes !== undefined)
      headers.authorization = `Bearer ${await sign(scopes === "none" ? { sub: "u1" } : { sub: "u1", scopes })}`;
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(`${url}${path}`, init);
    const text = await response.text();
    return {
      status: response.status,
      body: text === "" ? null : JSON.parse(text),
      challenge: response.headers.get("www-authenticate"),
    };
  };

  it("serves /health without a token", async () => {
    expect(await call("GET", "/health")).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  it("answers a missing token through the app's error handler, challenge kept", async () => {
    expect(await call("GET", "/agents")).toEqual({
      status: 401,
      body: { detail: "Authorization header missing", error_code: "UNAUTHENTICATED" },
      challenge: 'Bearer realm="platform"',
    });
  });

  it("filters the listing by the ids the token grants", async () => {
    expect(
      (await call("GET", "/agents", ["agents:read"])).body.agents.map((a: { id: string }) => a.id),
    ).toEqual(["a1", "a2"]);
    expect(
      (await call("GET", "/agents", ["agents:a2:read"])).body.agents.map((a: { id: string }) => a.id),
    ).toEqual(["a2"]);
    // Without agents:read the listing is empty, not an error page; creating still needs agents:write.
    const none = await call("GET", "/agents", ["teams:read"]);
    expect(none.status).toBe(200);
    expect(none.body.agents).toEqual([]);
    expect((await call("POST", "/agents", ["teams:read"])).status).toBe(403);
  });

  it("checks per-resource scopes on runs", async () => {
    expect(await call("POST", "/agents/a1/runs", ["agents:a1:run"])).toMatchObject({
      status: 202,
      body: { runBy: "u1" },
    });
    const refused = await call("POST", "/agents/a1/runs", ["agents:a2:run"]);
    expect(refused).toMatchObject({
      status: 403,
      body: { detail: "Insufficient permissions. Required scope(s): agents:run", error_code: "FORBIDDEN" },
    });
    expect(refused.challenge).toContain('error="insufficient_scope"');
  });

  it("parses JSON bodies and keeps its own validation and 404 errors", async () => {
    const created = await call("POST", "/agents", ["agents:write"], { name: "gamma" });
    expect(created).toMatchObject({ status: 201, body: { name: "gamma", owner: "u1" } });
    expect(await call("POST", "/agents", ["agents:write"], { name: "" })).toMatchObject({
      status: 422,
      body: { error_code: "VALIDATION_ERROR" },
    });
    expect(await call("GET", "/agents/zzz", ["agents:read"])).toMatchObject({
      status: 404,
      body: { error_code: "NOT_FOUND" },
    });
    expect(await call("DELETE", `/agents/${created.body.id}`, ["agents:delete"])).toMatchObject({
      status: 204,
    });
  });

  it("refuses a malformed body with 400, after authentication", async () => {
    const token = await sign({ sub: "u1", scopes: ["agents:write"] });
    const response = await fetch(`${url}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: "{nope",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ detail: "Invalid request body", error_code: "BAD_REQUEST" });
  });

  it("refuses a tampered token, and applies the mappings whatever the path's case", async () => {
    const token = await sign({ sub: "u1", scopes: ["agents:read"] });
    const tampered = `${token.slice(0, -4)}AAAA`;
    const response = await fetch(`${url}/agents`, { headers: { authorization: `Bearer ${tampered}` } });
    expect(response.status).toBe(401);
    // Express routes /AGENTS/a1 to /agents/:id; the mapping for it applies too.
    expect((await call("GET", "/AGENTS/a1", ["agents:a2:read"])).status).toBe(403);
    expect(await call("GET", "/AGENTS/a1", ["agents:a1:read"])).toMatchObject({ status: 200 });
  });
});
