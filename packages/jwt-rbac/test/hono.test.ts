import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JwtRbacVariables, jwtRbac } from "../src/hono/index.js";
import { TokenSource } from "../src/index.js";
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

describe("Hono adapter: where the headers come from", () => {
  let keys: TestKeys;
  let app: Hono<{ Variables: JwtRbacVariables }>;
  let server: TestServer;

  beforeAll(async () => {
    keys = await testKeys();
    const middleware = jwtRbac({
      algorithm: "HS256",
      verificationKeys: [keys.hsSecret],
      tokenSource: TokenSource.BOTH,
      scopeMappings: { "GET /me": [] },
    });
    await middleware.auth.ready;
    app = new Hono<{ Variables: JwtRbacVariables }>();
    app.use(middleware);
    app.get("/me", (c) => c.json({ user: c.get("auth").userId }));
    server = await serveFetchApp(app.fetch);
  });
  afterAll(() => server.close());

  /** node:http sends an array value as repeated header lines, which fetch() cannot. */
  function get(headers: Record<string, string | string[]>): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(`${server.url}/me`, { headers }, (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on("error", reject);
      request.end();
    });
  }

  it("reads the token from Node's request, whatever the header's case", async () => {
    const token = await sign({ sub: "u1" }, "HS256", keys.hsSecret);
    const response = await get({ AUTHORIZATION: `Bearer ${token}` });
    expect(response).toEqual({ status: 200, body: JSON.stringify({ user: "u1" }) });
  });

  it("refuses two Authorization headers, as the joined Fetch header value is refused", async () => {
    const token = await sign({ sub: "u1" }, "HS256", keys.hsSecret);
    const response = await get({ authorization: [`Bearer ${token}`, `Bearer ${token}`] });
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toEqual({
      detail: "Invalid request: the Authorization header must be sent once, with one token",
      error_code: "UNAUTHENTICATED",
    });
  });

  it("reads the cookie from Node's request", async () => {
    const token = await sign({ sub: "u2" }, "HS256", keys.hsSecret);
    const response = await get({ cookie: `other=1; access_token=${token}` });
    expect(response).toEqual({ status: 200, body: JSON.stringify({ user: "u2" }) });
  });

  /** Header lines exactly as given, over a raw socket: node:http would join repeated Cookie lines itself. */
  async function rawGet(headerLines: string[]): Promise<number> {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), "127.0.0.1");
    await once(socket, "connect");
    socket.end(
      `GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLines.join("\r\n")}\r\nConnection: close\r\n\r\n`,
    );
    let answer = "";
    socket.setEncoding("utf8");
    for await (const chunk of socket) answer += chunk;
    return Number(answer.split(" ")[1]);
  }

  it("joins repeated Cookie headers with '; ' as the Fetch Headers does, so the token cookie keeps its value", async () => {
    const token = await sign({ sub: "u4" }, "HS256", keys.hsSecret);
    // Joined with ", " the token's value would run on into the next cookie: "<token>, other=1".
    expect(await rawGet([`Cookie: access_token=${token}`, "Cookie: other=1"])).toBe(200);
    const fetchHeaders = await app.request("/me", {
      headers: [
        ["cookie", `access_token=${token}`],
        ["cookie", "other=1"],
      ],
    });
    expect(fetchHeaders.status).toBe(200);
  });

  it("falls back to the Fetch request's headers off Node (app.request, no c.env.incoming)", async () => {
    const token = await sign({ sub: "u3" }, "HS256", keys.hsSecret);
    const ok = await app.request("/me", { headers: { Authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ user: "u3" });
    const missing = await app.request("/me", {}, { incoming: {} });
    expect(missing.status).toBe(401);
  });
});
