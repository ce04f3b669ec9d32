import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { jwtRbac } from "@agent-platform/jwt-rbac/hono";
import { serve } from "@hono/node-server";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { createLogger } from "../src/http/logging.js";
import { publicKeyPem, signToken, startTestServer, type TestServer } from "./helpers.js";

const UI = "http://127.0.0.1:5173";
const OTHER = "http://127.0.0.1:5174";

/** One request over a raw socket (no client to add or fix a header); the answer's status and headers. */
function exchange(
  port: number,
  lines: readonly string[],
  body = "",
): Promise<{ status: number; headers: Map<string, string[]>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      const headers = new Map<string, string[]>();
      for (const line of text.slice(0, split).split("\r\n").slice(1)) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).toLowerCase();
        headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
      }
      resolve({ status: Number(text.slice(9, 12)), headers, body: text.slice(split + 4) });
    });
    socket.write(`${[...lines, "Connection: close", "", ""].join("\r\n")}${body}`);
  });
}

const corsHeaders = (headers: Map<string, string[]>) =>
  [...headers.keys()].filter((name) => name.startsWith("access-control-")).sort();
const vary = (headers: Map<string, string[]>) =>
  (headers.get("vary") ?? []).flatMap((value) => value.split(",").map((item) => item.trim().toLowerCase()));

function preflight(port: number, origin: string, path = "/databases/default/migrate", method = "POST") {
  return exchange(port, [
    `OPTIONS ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    `Origin: ${origin}`,
    `Access-Control-Request-Method: ${method}`,
    "Access-Control-Request-Headers: authorization",
  ]);
}

describe("CORS on the reference server (CORS_ALLOWED_ORIGINS)", () => {
  let server: TestServer;
  let tokens: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer({ env: { CORS_ALLOWED_ORIGINS: ` ${UI} ,${UI}` } });
    tokens = {
      admin: await signToken(["platform:admin"]),
      expired: await signToken(["platform:admin"], { expiresAt: Math.floor(Date.now() / 1000) - 3600 }),
      reader: await signToken(["agents:read"]),
    };
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  // Every kind of answer: success, each error the API gives, and one the router gives.
  const answers = (): [name: string, status: number, request: string[]][] => [
    ["200", 200, ["GET /databases/default/migrations HTTP/1.1", `Authorization: Bearer ${tokens.admin}`]],
    ["401 (no token)", 401, ["GET /databases/default/migrations HTTP/1.1"]],
    [
      "401 (expired)",
      401,
      ["GET /databases/default/migrations HTTP/1.1", `Authorization: Bearer ${tokens.expired}`],
    ],
    [
      "403",
      403,
      [
        "POST /databases/default/migrate HTTP/1.1",
        `Authorization: Bearer ${tokens.reader}`,
        "Content-Length: 0",
      ],
    ],
    ["404", 404, ["GET /databases/nope/migrations HTTP/1.1", `Authorization: Bearer ${tokens.admin}`]],
    // A JSON body on the migrate operation, which takes none: 422.
    [
      "422",
      422,
      [
        "POST /databases/default/migrate HTTP/1.1",
        `Authorization: Bearer ${tokens.admin}`,
        "Content-Type: application/json",
        "Content-Length: 26",
        `BODY:{"target_version":"2.3.0"}`,
      ],
    ],
  ];
  const send = (port: number, [requestLine, ...headers]: string[], origin: string | undefined) =>
    exchange(port, [
      requestLine as string,
      "Host: 127.0.0.1",
      ...(origin === undefined ? [] : [`Origin: ${origin}`]),
      ...headers,
    ]);

  it("an allowed origin can read every answer: Allow-Origin, exposed headers and Vary: Origin on each", async () => {
    for (const [name, status, lines] of answers()) {
      const result = await send(server.port, lines, UI);
      expect(result.status, name).toBe(status);
      expect(result.headers.get("access-control-allow-origin"), name).toEqual([UI]);
      expect(result.headers.get("access-control-allow-credentials"), name).toBeUndefined();
      expect(result.headers.get("access-control-expose-headers")?.[0], name).toContain("WWW-Authenticate");
      expect(vary(result.headers), name).toContain("origin");
      if (name === "401 (expired)") {
        expect(JSON.parse(result.body)).toEqual({
          detail: "Token has expired",
          error_code: "UNAUTHENTICATED",
        });
      }
    }
  });

  it("a disallowed origin, or none, gets no CORS header on any answer", async () => {
    for (const origin of [
      OTHER,
      "null",
      `${UI}/`,
      UI.toUpperCase(),
      "http://127.0.0.1:5173.evil.example",
      undefined,
    ]) {
      for (const [name, status, lines] of answers()) {
        const result = await send(server.port, lines, origin);
        expect(result.status, `${origin} ${name}`).toBe(status);
        expect(corsHeaders(result.headers), `${origin} ${name}`).toEqual([]);
      }
    }
  });

  it("answers an allowed origin's preflight before authentication: 204, methods, headers, max age", async () => {
    for (const [path, method] of [
      ["/databases/default/migrate", "POST"],
      ["/databases/default/migrations", "GET"],
      ["/no/such/route", "DELETE"],
    ] as const) {
      const result = await preflight(server.port, UI, path, method);
      expect(result.status).toBe(204);
      expect(result.headers.get("access-control-allow-origin")).toEqual([UI]);
      expect(result.headers.get("access-control-allow-methods")?.[0]).toContain(method);
      expect(result.headers.get("access-control-allow-headers")?.[0]?.toLowerCase()).toContain(
        "authorization",
      );
      expect(result.headers.get("access-control-max-age")).toEqual(["600"]);
      expect(vary(result.headers)).toContain("origin");
      expect(result.body).toBe("");
    }
  });

  it("refuses a disallowed origin's preflight with no CORS header", async () => {
    for (const origin of [OTHER, "null", `${UI}/`, "HTTP://127.0.0.1:5173"]) {
      const result = await preflight(server.port, origin);
      expect(result.status, origin).toBe(403);
      expect(corsHeaders(result.headers), origin).toEqual([]);
      expect(JSON.parse(result.body)).toMatchObject({ error_code: "FORBIDDEN" });
    }
  });

  it("a repeated Origin header is no allowed origin, even when both name it", async () => {
    for (const second of [UI, OTHER]) {
      const pre = await exchange(server.port, [
        "OPTIONS /databases/default/migrate HTTP/1.1",
        "Host: 127.0.0.1",
        `Origin: ${UI}`,
        `Origin: ${second}`,
        "Access-Control-Request-Method: POST",
      ]);
      expect(pre.status).toBe(403);
      expect(corsHeaders(pre.headers)).toEqual([]);
      const read = await exchange(server.port, [
        "GET /databases/default/migrations HTTP/1.1",
        "Host: 127.0.0.1",
        `Origin: ${UI}`,
        `Origin: ${second}`,
      ]);
      expect(read.status).toBe(401);
      expect(corsHeaders(read.headers)).toEqual([]);
    }
  });
});

describe("CORS with cookies as the token source", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { CORS_ALLOWED_ORIGINS: UI, JWT_TOKEN_SOURCE: "both" } });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("says Allow-Credentials on the preflight and on every answer, errors included", async () => {
    const pre = await preflight(server.port, UI);
    expect(pre.headers.get("access-control-allow-credentials")).toEqual(["true"]);
    const denied = await exchange(server.port, [
      "GET /databases/default/migrations HTTP/1.1",
      "Host: 127.0.0.1",
      `Origin: ${UI}`,
    ]);
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toEqual([UI]);
    expect(denied.headers.get("access-control-allow-credentials")).toEqual(["true"]);
  });
});

describe("a preflight never reaches authentication or a handler", () => {
  let port: number;
  let close: () => Promise<void>;
  const counts = { auth: 0, handler: 0 };
  beforeAll(async () => {
    const routes = new OpenAPIHono();
    routes.all("/counted", (c) => {
      counts.handler += 1;
      return c.json({ counted: counts.handler });
    });
    routes.get("/explode", () => {
      throw new Error("boom");
    });
    const auth = jwtRbac({
      verificationKeys: [await publicKeyPem()],
      algorithm: "ES256",
      excludedRoutePaths: ["/counted", "/explode"],
    });
    const counting: MiddlewareHandler = (c, next) => {
      counts.auth += 1;
      return auth(c, next);
    };
    const app = createApp({
      databases: [],
      knownVersions: [],
      auth: Object.assign(counting, { auth: auth.auth }),
      logger: createLogger("silent"),
      routes: [routes],
      serverUrl: () => "",
      cors: { allowedOrigins: [UI], credentials: false },
    });
    const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    port = (server.address() as AddressInfo).port;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => {
    await close?.();
  });

  it("answers the allowed preflight itself; a disallowed one is refused, also before both", async () => {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      expect((await preflight(port, UI, "/counted", method)).status).toBe(204);
      expect((await preflight(port, OTHER, "/counted", method)).status).toBe(403);
    }
    expect(counts).toEqual({ auth: 0, handler: 0 });
    // The request that follows the preflight runs, and is readable.
    const real = await exchange(port, [
      "PUT /counted HTTP/1.1",
      "Host: 127.0.0.1",
      `Origin: ${UI}`,
      "Content-Length: 0",
    ]);
    expect(real.status).toBe(200);
    expect(real.headers.get("access-control-allow-origin")).toEqual([UI]);
    expect(counts).toEqual({ auth: 1, handler: 1 });
  });

  it("an OPTIONS that is no preflight goes on to authentication and the handler", async () => {
    const result = await exchange(port, ["OPTIONS /counted HTTP/1.1", "Host: 127.0.0.1", `Origin: ${UI}`]);
    expect(result.status).toBe(200);
    expect(result.headers.get("access-control-allow-origin")).toEqual([UI]);
    expect(vary(result.headers)).toContain("origin");
    expect(counts).toEqual({ auth: 2, handler: 2 });
  });

  it("a 500 carries the CORS headers too", async () => {
    const result = await exchange(port, ["GET /explode HTTP/1.1", "Host: 127.0.0.1", `Origin: ${UI}`]);
    expect(result.status).toBe(500);
    expect(result.headers.get("access-control-allow-origin")).toEqual([UI]);
    expect(vary(result.headers)).toContain("origin");
  });
});

describe("CORS for a browser UI using DPoP (JWT_DPOP with CORS_ALLOWED_ORIGINS)", () => {
  const NAMED = "https://ui.example.com";
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        CORS_ALLOWED_ORIGINS: `${UI},${NAMED}`,
        JWT_DPOP: "allowed",
        JWT_DPOP_NONCE_SECRET: "n".repeat(32),
      },
    });
    admin = await signToken(["platform:admin"]);
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  const get = (origin: string | undefined, extra: readonly string[] = []) =>
    exchange(server.port, [
      "GET /databases/default/migrations HTTP/1.1",
      "Host: 127.0.0.1",
      ...(origin === undefined ? [] : [`Origin: ${origin}`]),
      ...extra,
    ]);
  const exposed = (headers: Map<string, string[]>) =>
    (headers.get("access-control-expose-headers") ?? []).flatMap((value) =>
      value.split(",").map((item) => item.trim().toLowerCase()),
    );

  it("allows a preflight asking for authorization and dpop, for each allowed origin and method", async () => {
    for (const origin of [UI, NAMED]) {
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const result = await exchange(server.port, [
          "OPTIONS /databases/default/migrate HTTP/1.1",
          "Host: 127.0.0.1",
          `Origin: ${origin}`,
          `Access-Control-Request-Method: ${method}`,
          "Access-Control-Request-Headers: authorization, dpop",
        ]);
        expect(result.status, `${origin} ${method}`).toBe(204);
        expect(result.headers.get("access-control-allow-origin")).toEqual([origin]);
        const allowed = (result.headers.get("access-control-allow-headers")?.[0] ?? "")
          .split(",")
          .map((item) => item.trim().toLowerCase());
        expect(allowed).toEqual(expect.arrayContaining(["authorization", "dpop"]));
      }
    }
  });

  it("exposes DPoP-Nonce and WWW-Authenticate on every answer to an allowed origin", async () => {
    const answers: [string, number, string[]][] = [
      ["200 (bearer)", 200, [`Authorization: Bearer ${admin}`]],
      ["401 (no token)", 401, []],
      ["401 (DPoP without a proof)", 401, ["Authorization: DPoP abc.def.ghi"]],
      ["401 (DPoP, a proof of nothing)", 401, ["Authorization: DPoP abc.def.ghi", "DPoP: x.y.z"]],
    ];
    for (const [name, status, extra] of answers) {
      const result = await get(UI, extra);
      expect(result.status, name).toBe(status);
      expect(result.headers.get("access-control-allow-origin"), name).toEqual([UI]);
      expect(exposed(result.headers), name).toEqual(
        expect.arrayContaining(["dpop-nonce", "www-authenticate"]),
      );
      if (status === 401)
        expect(result.headers.get("www-authenticate")?.[0], name).toMatch(/^(Bearer|DPoP) /);
    }
    // The DPoP challenge carries the nonce the page must read.
    const nonced = await get(UI, ["Authorization: DPoP abc.def.ghi"]);
    expect(nonced.headers.get("dpop-nonce")?.[0]).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]+$/);
  });

  it("an OPTIONS with Origin but no Access-Control-Request-Method is no preflight: it is authenticated", async () => {
    for (const origin of [UI, OTHER, NAMED]) {
      for (const extra of [[], ["Access-Control-Request-Headers: authorization, dpop"]]) {
        const result = await exchange(server.port, [
          "OPTIONS /databases/default/migrations HTTP/1.1",
          "Host: 127.0.0.1",
          `Origin: ${origin}`,
          ...extra,
        ]);
        expect(result.status, `${origin} ${extra}`).toBe(401);
        expect(result.headers.get("access-control-allow-methods"), origin).toBeUndefined();
      }
    }
    // And Access-Control-Request-Method without Origin: no preflight either.
    const noOrigin = await exchange(server.port, [
      "OPTIONS /databases/default/migrations HTTP/1.1",
      "Host: 127.0.0.1",
      "Access-Control-Request-Method: GET",
    ]);
    expect(noOrigin.status).toBe(401);
  });

  // Each near miss of an allowed origin: one that ends with it, starts with it, differs in case, a trailing dot,
  // the port, the scheme, userinfo, whitespace inside, `null`. None is allowed: a preflight is refused and no
  // answer carries a CORS header.
  const NEAR_MISSES = [
    `evil${NAMED}`,
    `https://evil.example/${NAMED}`,
    `null ${NAMED}`,
    "https://evil.ui.example.com",
    "https://xui.example.com",
    `${NAMED}.evil.example`,
    `${NAMED}x`,
    `${NAMED}/`,
    `${NAMED}/x`,
    "https://UI.example.com",
    "HTTPS://ui.example.com",
    "https://ui.example.com.",
    "https://ui.example.com:443",
    "https://ui.example.com:8443",
    "http://ui.example.com",
    "wss://ui.example.com",
    "https://user@ui.example.com",
    "https://ui.example.co",
    `${NAMED}\u00a0`,
    `${NAMED}\u0001`,
    "null",
    `evil${UI}`,
    `${UI}1`,
    "http://127.0.0.1:05173",
    "http://127.0.0.1.:5173",
    "http://localhost:5173",
  ];

  it("refuses each near miss of an allowed origin", async () => {
    for (const origin of NEAR_MISSES) {
      const pre = await exchange(server.port, [
        "OPTIONS /databases/default/migrate HTTP/1.1",
        "Host: 127.0.0.1",
        `Origin: ${origin}`,
        "Access-Control-Request-Method: POST",
        "Access-Control-Request-Headers: authorization, dpop",
      ]);
      // Node's parser refuses a control character itself (400); anything else is this server's 403.
      expect([403, 400], JSON.stringify(origin)).toContain(pre.status);
      expect(corsHeaders(pre.headers), JSON.stringify(origin)).toEqual([]);
      const read = await get(origin, [`Authorization: Bearer ${admin}`]);
      if (read.status !== 400) expect(read.status, JSON.stringify(origin)).toBe(200);
      expect(corsHeaders(read.headers), JSON.stringify(origin)).toEqual([]);
    }
  });
});
