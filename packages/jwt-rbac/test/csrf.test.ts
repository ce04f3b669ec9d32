import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, createJwtAuth, type JwtRbacOptions, TokenSource } from "../src/index.js";
import { sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { ADAPTERS, startServer, type TestServer } from "./fixtures/servers.js";

// A cross-site form carries the cookie but cannot set a header: with the token in a cookie, an unsafe
// request must prove it is same-origin. Requests go over node:http so that exactly the headers listed
// here are sent (fetch() adds its own).

let keys: TestKeys;
let token: string;
beforeAll(async () => {
  keys = await testKeys();
  token = await sign({ sub: "u1", scopes: ["platform:admin"] }, "HS256", keys.hsSecret);
});

interface Answer {
  status: number;
  body: { detail?: string; error_code?: string };
}

function send(url: string, method: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/agents/a1/runs`, { method, headers }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: text === "" ? {} : JSON.parse(text) }),
      );
    });
    request.on("error", reject);
    request.end(method === "POST" ? "name=x" : undefined);
  });
}

const FORM = { "content-type": "application/x-www-form-urlencoded" };
const NEITHER =
  "Cross-site request refused: a POST authenticated by cookie must carry Sec-Fetch-Site or Origin";
const CROSS = "Cross-site request refused: a POST authenticated by cookie must come from an allowed origin";

describe.each(ADAPTERS)("%s adapter: cookie tokens and cross-site requests", (adapter) => {
  let server: TestServer;
  let ownOrigin: string;
  const options = (extra: JwtRbacOptions = {}): JwtRbacOptions => ({
    algorithm: "HS256",
    verificationKeys: [keys.hsSecret],
    authorization: true,
    tokenSource: TokenSource.BOTH,
    ...extra,
  });
  beforeAll(async () => {
    server = await startServer(adapter, options());
    ownOrigin = server.url;
  });
  afterAll(() => server.close());

  const cookie = () => ({ cookie: `access_token=${token}` });

  it.each([
    ["same-origin", 200],
    ["none", 200],
    ["same-site", 403],
    ["cross-site", 403],
    ["bogus", 403],
  ])("Sec-Fetch-Site: %s -> %i", async (site, status) => {
    const answer = await send(server.url, "POST", { ...FORM, ...cookie(), "sec-fetch-site": site });
    expect(answer.status).toBe(status);
    if (status === 403) expect(answer.body).toEqual({ detail: CROSS, error_code: "CSRF_REJECTED" });
  });

  it("accepts its own Origin, refuses another one and the opaque 'null'", async () => {
    expect((await send(server.url, "POST", { ...FORM, ...cookie(), origin: ownOrigin })).status).toBe(200);
    for (const origin of [
      "https://evil.example",
      "null",
      `${ownOrigin}.evil.example`,
      ownOrigin.toUpperCase(),
    ]) {
      const answer = await send(server.url, "POST", { ...FORM, ...cookie(), origin });
      expect(answer, origin).toEqual({ status: 403, body: { detail: CROSS, error_code: "CSRF_REJECTED" } });
    }
  });

  it("refuses the classic cross-site form post (cookie, Origin of the attacker, cross-site)", async () => {
    const answer = await send(server.url, "POST", {
      ...FORM,
      ...cookie(),
      origin: "https://evil.example",
      "sec-fetch-site": "cross-site",
    });
    expect(answer).toEqual({ status: 403, body: { detail: CROSS, error_code: "CSRF_REJECTED" } });
  });

  it("refuses an unsafe request that carries neither header", async () => {
    // OPTIONS too: a preflight never reaches the check, and an `app.all` handler may act on any other OPTIONS.
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PURGE"]) {
      const answer = await send(server.url, method, { ...FORM, ...cookie() });
      const detail = NEITHER.replace("POST", method);
      expect(answer, method).toEqual({ status: 403, body: { detail, error_code: "CSRF_REJECTED" } });
    }
  });

  it("lets safe methods through with the cookie alone", async () => {
    for (const method of ["GET", "HEAD"]) {
      expect((await send(server.url, method, cookie())).status, method).toBe(200);
    }
  });

  it("does not apply to a token from the Authorization header, which a form cannot set", async () => {
    const answer = await send(server.url, "POST", {
      ...FORM,
      authorization: `Bearer ${token}`,
      origin: "https://evil.example",
      "sec-fetch-site": "cross-site",
    });
    expect(answer.status).toBe(200);
  });

  it("checks before the token: a cross-site request learns nothing about its cookie", async () => {
    const answer = await send(server.url, "POST", { ...FORM, cookie: "access_token=not-a-jwt" });
    expect(answer.body.error_code).toBe("CSRF_REJECTED");
  });

  it("allowedOrigins replaces the default: listed origins pass, its own origin needs listing", async () => {
    const listed = await startServer(
      adapter,
      options({ tokenSource: TokenSource.COOKIE, allowedOrigins: ["https://app.example.com"] }),
    );
    try {
      const from = (origin: string, site = "cross-site") =>
        send(listed.url, "POST", { ...FORM, ...cookie(), origin, "sec-fetch-site": site });
      expect((await from("https://app.example.com")).status).toBe(200);
      expect((await from("https://other.example.com")).status).toBe(403);
      expect((await from(listed.url, "same-site")).status).toBe(403);
      expect((await from(listed.url, "same-origin")).status).toBe(200);
    } finally {
      await listed.close();
    }
  });
});

describe("allowedOrigins configuration", () => {
  it("normalises an origin's case and a trailing slash", () => {
    expect(() =>
      createJwtAuth({
        algorithm: "HS256",
        verificationKeys: ["s".repeat(32)],
        allowedOrigins: ["HTTPS://App.Example.com/", "http://localhost:3000"],
      }),
    ).not.toThrow();
  });

  it.each([
    "*",
    "null",
    "app.example.com",
    "https://app.example.com/path",
    "ftp://app.example.com",
    "https://app.example.com?x",
  ])("refuses %j", (origin) => {
    expect(() =>
      createJwtAuth({ algorithm: "HS256", verificationKeys: ["s".repeat(32)], allowedOrigins: [origin] }),
    ).toThrow(ConfigError);
  });
});

describe("the request's own origin given to the core by a custom adapter", () => {
  const auth = () =>
    createJwtAuth({
      algorithm: "HS256",
      verificationKeys: [keys.hsSecret],
      tokenSource: TokenSource.BOTH,
    });
  const request = (origin: string | (() => string | undefined), headers: Record<string, string>) => ({
    method: "POST",
    path: "/agents/a1/runs",
    headers: new Headers(headers),
    origin,
  });

  it.each([
    ["a string", "https://app.example"],
    ["a function", () => "https://app.example"],
  ] as const)("as %s: its own Origin passes, another is refused", async (_, origin) => {
    const core = auth();
    const cookie = `access_token=${token}`;
    const same = await core.authenticate(request(origin, { cookie, origin: "https://app.example" }));
    expect(same.ok).toBe(true);
    const other = await core.authenticate(request(origin, { cookie, origin: "https://evil.example" }));
    expect(other).toMatchObject({ ok: false, error: { status: 403, code: "CSRF_REJECTED" } });
  });

  it("as a function, is called only for a cookie-authenticated unsafe request that carries Origin", async () => {
    const core = auth();
    let calls = 0;
    const origin = () => {
      calls++;
      return "https://app.example";
    };
    const sent = [
      { authorization: `Bearer ${token}`, origin: "https://app.example" },
      { cookie: `access_token=${token}`, "sec-fetch-site": "same-origin" },
      { cookie: `access_token=${token}` },
    ];
    for (const headers of sent) await core.authenticate(request(origin, headers));
    expect(calls).toBe(0);
    await core.authenticate(
      request(origin, { cookie: `access_token=${token}`, origin: "https://app.example" }),
    );
    expect(calls).toBe(1);
  });
});
