import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStubServer } from "@agent-platform/test-support/stub-server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import { type JwtRbacOptions, TokenSource } from "../src/index.js";
import { hostileOptions, hostileTokens } from "./fixtures/hostile-tokens.js";
import { NOW_S, sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { ADAPTERS, type AdapterName, startServer } from "./fixtures/servers.js";

let keys: TestKeys;
beforeAll(async () => {
  keys = await testKeys();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

interface Call {
  method?: string;
  token?: string;
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  body: { detail?: string; error_code?: string; auth?: Record<string, unknown> | null };
  challenge: string | null;
  contentType: string | null;
}

async function call(
  url: string,
  path: string,
  { method = "GET", token, headers = {} }: Call = {},
): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: token === undefined ? headers : { authorization: `Bearer ${token}`, ...headers },
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text === "" ? {} : JSON.parse(text),
    challenge: response.headers.get("www-authenticate"),
    contentType: response.headers.get("content-type"),
  };
}

const HS = () => ({ algorithm: "HS256", verificationKeys: [keys.hsSecret] }) satisfies JwtRbacOptions;
const hs = (claims: Record<string, unknown>) => sign(claims, "HS256", keys.hsSecret);

/** Starts the adapter with `options`, runs `body`, always closes the server. */
async function withServer(
  adapter: AdapterName,
  options: JwtRbacOptions,
  body: (url: string) => Promise<void>,
) {
  const server = await startServer(adapter, options);
  try {
    await body(server.url);
  } finally {
    await server.close();
  }
}

function expectError(answer: Answer, status: number, detail: string, challenge: string) {
  expect(answer.status).toBe(status);
  expect(answer.body).toEqual({ detail, error_code: status === 403 ? "FORBIDDEN" : "UNAUTHENTICATED" });
  expect(answer.contentType).toMatch(/^application\/json/);
  expect(answer.challenge).toBe(challenge);
}

const invalid = (description: string) =>
  `Bearer realm="platform", error="invalid_token", error_description="${description}"`;

describe.each(ADAPTERS)("%s adapter over HTTP", (adapter) => {
  it("fills the state from the claims", async () => {
    const options: JwtRbacOptions = {
      ...HS(),
      dependenciesClaims: ["tenant", "absent"],
      sessionStateClaims: ["cart"],
    };
    await withServer(adapter, options, async (url) => {
      const token = await hs({
        sub: "u1",
        session_id: "s1",
        scopes: ["agents:read"],
        aud: ["p1", "p2"],
        tenant: "t1",
        cart: { n: 2 },
      });
      const answer = await call(url, "/anything", { token });
      expect(answer.status).toBe(200);
      expect(answer.body.auth).toMatchObject({
        authenticated: true,
        userId: "u1",
        sessionId: "s1",
        scopes: ["agents:read"],
        audience: "p1",
        token,
        authorizationEnabled: false,
        dependencies: { tenant: "t1" },
        sessionState: { cart: { n: 2 } },
        accessibleResourceIds: [],
      });
      expect(answer.body.auth?.claims).toMatchObject({ sub: "u1", tenant: "t1" });
    });
  });

  it("reads renamed claims; scopes may be a space-separated string", async () => {
    const options: JwtRbacOptions = {
      ...HS(),
      scopesClaim: "scope",
      userIdClaim: "uid",
      sessionIdClaim: "sid",
      audienceClaim: "platform",
    };
    await withServer(adapter, options, async (url) => {
      const token = await hs({
        uid: "u2",
        sid: "s2",
        scope: "agents:read  teams:read",
        platform: "p9",
        sub: "ignored",
      });
      expect((await call(url, "/x", { token })).body.auth).toMatchObject({
        userId: "u2",
        sessionId: "s2",
        scopes: ["agents:read", "teams:read"],
        audience: "p9",
      });
    });
  });

  it.each([
    ["HS256", () => ({ verificationKeys: [keys.hsSecret] }), () => keys.hsSecret],
    ["RS256", () => ({ verificationKeys: [keys.rs256.publicPem] }), () => keys.rs256.privateKey],
    ["ES256", () => ({ verificationKeys: [keys.es256.publicPem] }), () => keys.es256.privateKey],
    ["EdDSA", () => ({ verificationKeys: [keys.eddsa.publicPem] }), () => keys.eddsa.privateKey],
  ] as const)("verifies %s", async (alg, options, key) => {
    await withServer(adapter, { algorithm: alg, ...options() }, async (url) => {
      expect((await call(url, "/x", { token: await sign({ sub: alg }, alg, key()) })).body.auth?.userId).toBe(
        alg,
      );
      const other = alg === "HS256" ? "HS256" : alg;
      const wrongKey = alg === "HS256" ? "another-secret-that-is-long-enough-!!" : keys.rs256b.privateKey;
      const forged =
        alg === "RS256" || alg === "HS256" ? await sign({ sub: "x" }, other, wrongKey) : undefined;
      if (forged !== undefined) {
        expectError(
          await call(url, "/x", { token: forged }),
          401,
          "Invalid token: signature verification failed",
          invalid("Invalid token: signature verification failed"),
        );
      }
    });
  });

  it("tries several keys in order (deprecated secretKey appended)", async () => {
    const options: JwtRbacOptions = {
      algorithm: "HS256",
      verificationKeys: ["first-secret-first-secret-first-secret"],
      secretKey: keys.hsSecret,
    };
    await withServer(adapter, options, async (url) => {
      expect((await call(url, "/x", { token: await hs({ sub: "second" }) })).body.auth?.userId).toBe(
        "second",
      );
      const first = await sign({ sub: "first" }, "HS256", "first-secret-first-secret-first-secret");
      expect((await call(url, "/x", { token: first })).body.auth?.userId).toBe("first");
    });
  });

  it("picks JWKS keys by kid from a file; an unknown kid is a 401", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jwt-rbac-jwks-"));
    const jwksFile = join(dir, "jwks.json");
    writeFileSync(
      jwksFile,
      JSON.stringify({ keys: [{ ...keys.rs256.publicJwk, kid: "k1", use: "sig", alg: "RS256" }] }),
    );
    await withServer(adapter, { jwksFile }, async (url) => {
      expect(
        (
          await call(url, "/x", {
            token: await sign({ sub: "k" }, "RS256", keys.rs256.privateKey, { kid: "k1" }),
          })
        ).status,
      ).toBe(200);
      const unknown = await call(url, "/x", {
        token: await sign({ sub: "k" }, "RS256", keys.rs256.privateKey, { kid: "k9" }),
      });
      expectError(
        unknown,
        401,
        "Invalid token: no key matches the token's kid",
        invalid("Invalid token: no key matches the token's kid"),
      );
    });
  });

  it("fetches a remote JWKS (jwksUrl) once and picks keys by kid", async () => {
    const jwksServer = await startStubServer({
      body: { keys: [{ ...keys.es256.publicJwk, kid: "remote-1", alg: "ES256", use: "sig" }] },
    });
    const jwksUrl = `${jwksServer.url}/jwks.json`;
    try {
      await withServer(adapter, { algorithm: "ES256", jwksUrl }, async (url) => {
        for (const sub of ["r1", "r2"]) {
          const token = await sign({ sub }, "ES256", keys.es256.privateKey, { kid: "remote-1" });
          expect((await call(url, "/x", { token })).body.auth?.userId).toBe(sub);
        }
        const unknown = await sign({ sub: "x" }, "ES256", keys.es256.privateKey, { kid: "remote-9" });
        expect((await call(url, "/x", { token: unknown })).body.detail).toBe(
          "Invalid token: no key matches the token's kid",
        );
      });
      expect(jwksServer.requests).toHaveLength(1);
    } finally {
      await jwksServer.close();
    }
  });

  it("takes keys from the environment, and options over the environment", async () => {
    vi.stubEnv("JWT_VERIFICATION_KEY", keys.rs256.publicPem);
    await withServer(adapter, {}, async (url) => {
      expect(
        (await call(url, "/x", { token: await sign({ sub: "env" }, "RS256", keys.rs256.privateKey) })).status,
      ).toBe(200);
    });
    await withServer(adapter, { verificationKeys: [keys.rs256b.publicPem] }, async (url) => {
      expect(
        (await call(url, "/x", { token: await sign({ sub: "env" }, "RS256", keys.rs256.privateKey) })).status,
      ).toBe(401);
      expect(
        (await call(url, "/x", { token: await sign({ sub: "opt" }, "RS256", keys.rs256b.privateKey) }))
          .status,
      ).toBe(200);
    });
    const dir = mkdtempSync(join(tmpdir(), "jwt-rbac-env-"));
    const jwksFile = join(dir, "jwks.json");
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...keys.es256.publicJwk, kid: "e1" }] }));
    vi.stubEnv("JWT_VERIFICATION_KEY", "");
    vi.stubEnv("JWT_JWKS_FILE", jwksFile);
    await withServer(adapter, { algorithm: "ES256" }, async (url) => {
      expect(
        (
          await call(url, "/x", {
            token: await sign({ sub: "e" }, "ES256", keys.es256.privateKey, { kid: "e1" }),
          })
        ).status,
      ).toBe(200);
    });
  });

  it("validate:false accepts an unverifiable token but not an undecodable one", async () => {
    await withServer(adapter, { validate: false }, async (url) => {
      const token = await sign(
        { sub: "dev", exp: NOW_S() - 999 },
        "HS256",
        "unknown-secret-unknown-secret-unknown",
      );
      expect((await call(url, "/x", { token })).body.auth?.userId).toBe("dev");
      expect((await call(url, "/x", { token: "abc" })).status).toBe(401);
    });
  });

  describe("token sources", () => {
    it("HEADER: the Authorization header only, with a custom header name", async () => {
      await withServer(adapter, HS(), async (url) => {
        expectError(
          await call(url, "/x", { headers: { cookie: `access_token=${await hs({})}` } }),
          401,
          "Authorization header missing",
          'Bearer realm="platform"',
        );
        expectError(
          await call(url, "/x", { headers: { authorization: `Basic ${await hs({})}` } }),
          401,
          "Invalid token: authorization scheme must be Bearer",
          invalid("Invalid token: authorization scheme must be Bearer"),
        );
      });
      await withServer(adapter, { ...HS(), tokenHeaderKey: "X-Access-Token" }, async (url) => {
        expect(
          (await call(url, "/x", { headers: { "x-access-token": `Bearer ${await hs({ sub: "c" })}` } })).body
            .auth?.userId,
        ).toBe("c");
        expectError(
          await call(url, "/x", { token: await hs({}) }),
          401,
          "X-Access-Token header missing",
          'Bearer realm="platform"',
        );
      });
    });

    it("COOKIE: the cookie only, custom name", async () => {
      await withServer(
        adapter,
        { ...HS(), tokenSource: TokenSource.COOKIE, cookieName: "jwt" },
        async (url) => {
          expect(
            (await call(url, "/x", { headers: { cookie: `a=b; jwt=${await hs({ sub: "ck" })}` } })).body.auth
              ?.userId,
          ).toBe("ck");
          expectError(
            await call(url, "/x", { token: await hs({}) }),
            401,
            "JWT cookie 'jwt' missing",
            'Bearer realm="platform"',
          );
        },
      );
    });

    it("BOTH: header first, cookie as fallback", async () => {
      await withServer(adapter, { ...HS(), tokenSource: TokenSource.BOTH }, async (url) => {
        const cookie = `access_token=${await hs({ sub: "cookie" })}`;
        expect(
          (await call(url, "/x", { token: await hs({ sub: "header" }), headers: { cookie } })).body.auth
            ?.userId,
        ).toBe("header");
        expect((await call(url, "/x", { headers: { cookie } })).body.auth?.userId).toBe("cookie");
        expectError(
          await call(url, "/x"),
          401,
          "JWT missing from both the Authorization header and the 'access_token' cookie",
          'Bearer realm="platform"',
        );
      });
    });
  });

  describe("claims checks", () => {
    it("expired, not yet valid, clock tolerance", async () => {
      await withServer(adapter, HS(), async (url) => {
        expectError(
          await call(url, "/x", { token: await hs({ exp: NOW_S() - 60 }) }),
          401,
          "Token has expired",
          invalid("Token has expired"),
        );
        expectError(
          await call(url, "/x", { token: await hs({ nbf: NOW_S() + 600 }) }),
          401,
          "Invalid token: token is not yet valid",
          invalid("Invalid token: token is not yet valid"),
        );
        expect((await call(url, "/x", { token: await hs({ exp: NOW_S() - 3 }) })).status).toBe(200);
      });
      await withServer(adapter, { ...HS(), clockTolerance: 0 }, async (url) => {
        expect((await call(url, "/x", { token: await hs({ exp: NOW_S() - 3 }) })).status).toBe(401);
      });
    });

    it("audience: an explicit audience is always checked; platformId only with verifyAudience", async () => {
      await withServer(adapter, { ...HS(), platformId: "p1" }, async (url) => {
        expect((await call(url, "/x", { token: await hs({ aud: "other" }) })).status).toBe(200);
      });
      await withServer(adapter, { ...HS(), audience: "https://api.example" }, async (url) => {
        expect(
          (await call(url, "/x", { token: await hs({ aud: ["x", "https://api.example"] }) })).status,
        ).toBe(200);
        expectError(
          await call(url, "/x", { token: await hs({ aud: "https://other.example" }) }),
          401,
          "Invalid token audience",
          invalid("Invalid token audience"),
        );
      });
      await withServer(adapter, { ...HS(), platformId: "p1", verifyAudience: true }, async (url) => {
        expect((await call(url, "/x", { token: await hs({ aud: "p1" }) })).status).toBe(200);
        expectError(
          await call(url, "/x", { token: await hs({ aud: "other" }) }),
          401,
          "Invalid token audience",
          invalid("Invalid token audience"),
        );
        expectError(
          await call(url, "/x", { token: await hs({}) }),
          401,
          "Invalid token audience",
          invalid("Invalid token audience"),
        );
      });
      await withServer(
        adapter,
        { ...HS(), audience: ["a", "b"], verifyAudience: true, audienceClaim: "platform" },
        async (url) => {
          expect((await call(url, "/x", { token: await hs({ platform: "b" }) })).status).toBe(200);
        },
      );
    });

    it("issuer", async () => {
      await withServer(adapter, { ...HS(), issuer: "https://issuer.example" }, async (url) => {
        expect((await call(url, "/x", { token: await hs({ iss: "https://issuer.example" }) })).status).toBe(
          200,
        );
        expectError(
          await call(url, "/x", { token: await hs({ iss: "https://evil.example" }) }),
          401,
          "Invalid token: unexpected issuer",
          invalid("Invalid token: unexpected issuer"),
        );
      });
    });
  });

  describe("RBAC", () => {
    it("is off by default, on with scopeMappings or authorization:true", async () => {
      await withServer(adapter, HS(), async (url) => {
        expect((await call(url, "/agents/a1", { method: "DELETE", token: await hs({}) })).status).toBe(200);
      });
      await withServer(adapter, { ...HS(), authorization: true }, async (url) => {
        const answer = await call(url, "/agents/a1", {
          method: "DELETE",
          token: await hs({ scopes: ["agents:read"] }),
        });
        expectError(
          answer,
          403,
          "Insufficient permissions. Required scope(s): agents:delete",
          'Bearer realm="platform", error="insufficient_scope", error_description="Insufficient permissions. Required scope(s): agents:delete", scope="agents:delete"',
        );
      });
      await withServer(adapter, { ...HS(), scopeMappings: {}, authorization: false }, async (url) => {
        expect((await call(url, "/agents/a1", { method: "DELETE", token: await hs({}) })).status).toBe(200);
      });
    });

    it("applies the scope grammar on the default table", async () => {
      await withServer(adapter, { ...HS(), authorization: true }, async (url) => {
        const run = (scopes: string[]) =>
          hs({ scopes }).then((token) => call(url, "/agents/a1/runs", { method: "POST", token }));
        for (const scopes of [["agents:run"], ["agents:*:run"], ["agents:a1:run"], ["platform:admin"]]) {
          expect((await run(scopes)).status, scopes.join()).toBe(200);
        }
        for (const scopes of [["agents:a2:run"], ["agents:run:x"], ["agents:*"], []]) {
          expect((await run(scopes)).status, scopes.join()).toBe(403);
        }
        const both = await call(url, "/databases/db1/migrate", {
          method: "POST",
          token: await hs({ scopes: "config:read" }),
        });
        expect(both.status).toBe(403);
      });
    });

    it("a listing route passes every valid token, with the ids it may list; other methods are checked", async () => {
      await withServer(adapter, { ...HS(), authorization: true }, async (url) => {
        const ids = async (scopes: string[], path = "/agents", method = "GET") => {
          const answer = await call(url, path, { method, token: await hs({ scopes }) });
          return answer.status === 200 ? answer.body.auth?.accessibleResourceIds : answer.status;
        };
        // Without agents:read: an empty list to show, never an error page.
        expect(await ids(["teams:read"])).toEqual([]);
        expect(await ids([])).toEqual([]);
        expect(await ids(["agents:a1:run"])).toEqual([]);
        expect(await ids(["agents:a1:read"])).toEqual(["a1"]);
        expect(await ids(["agents:a1:read", "agents:a2:read", "teams:t1:read"])).toEqual(["a1", "a2"]);
        for (const scopes of [
          ["agents:read"],
          ["agents:*:read"],
          ["platform:admin"],
          ["agents:a1:read", "agents:read"],
        ]) {
          expect(await ids(scopes), scopes.join()).toEqual(["*"]);
        }
        expect(await ids(["workflows:w1:read"], "/workflows/")).toEqual(["w1"]);
        const head = await call(url, "/teams", {
          method: "HEAD",
          token: await hs({ scopes: ["agents:read"] }),
        });
        expect(head.status).toBe(200);
        // Only GET of the listing path: POST /agents, and /agents/a1, are authorized as any route.
        expectError(
          await call(url, "/agents", { method: "POST", token: await hs({ scopes: ["teams:read"] }) }),
          403,
          "Insufficient permissions. Required scope(s): agents:write",
          'Bearer realm="platform", error="insufficient_scope", error_description="Insufficient permissions. Required scope(s): agents:write", scope="agents:write"',
        );
        expect(await ids(["agents:a1:read"], "/agents", "POST")).toBe(403);
        expect(await ids(["agents:a1:read"], "/agents", "DELETE")).toBe(403);
        expect(await ids(["agents:a1:read"], "/agents/a2")).toBe(403);
        expect(await ids(["agents:a1:read"], "/agents/a1")).toEqual([]);
        // Still a valid token only: no token, or a bad one, is a 401.
        expect((await call(url, "/agents")).status).toBe(401);
        expect((await call(url, "/agents", { token: "nope" })).status).toBe(401);
      });
    });

    it("accepts the legacy system:* scopes as config:*, unless legacyScopeAliases is false", async () => {
      const config = (url: string, scopes: string[], path = "/config", method = "GET") =>
        hs({ scopes }).then(async (token) => (await call(url, path, { method, token })).status);
      await withServer(adapter, { ...HS(), authorization: true }, async (url) => {
        expect(await config(url, ["system:read"])).toBe(200);
        expect(await config(url, ["system:read"], "/models")).toBe(200);
        expect(await config(url, ["system:write"], "/databases/db1/migrate", "POST")).toBe(200);
        expect(await config(url, ["system:*:read"])).toBe(200);
        expect(await config(url, ["system:read"], "/databases/db1/migrate", "POST")).toBe(403);
        expect(await config(url, ["System:read"])).toBe(403);
        expect(await config(url, ["config:read"])).toBe(200);
      });
      await withServer(adapter, { ...HS(), authorization: true, legacyScopeAliases: false }, async (url) => {
        expect(await config(url, ["system:read"])).toBe(403);
        expect(await config(url, ["config:read"])).toBe(200);
      });
    });

    it("scopeMappings override a default, add a route, or open one with []", async () => {
      const scopeMappings = {
        "GET /agents/*": ["agents:inspect"],
        "POST /reports/*/render": ["reports:write", "reports:read"],
        "DELETE /agents/*": [],
      };
      await withServer(adapter, { ...HS(), scopeMappings }, async (url) => {
        expect((await call(url, "/agents/a1", { token: await hs({ scopes: ["agents:read"] }) })).status).toBe(
          403,
        );
        expect(
          (await call(url, "/agents/a1", { token: await hs({ scopes: ["agents:inspect"] }) })).status,
        ).toBe(200);
        const render = await call(url, "/reports/r1/render", {
          method: "POST",
          token: await hs({ scopes: ["reports:write"] }),
        });
        expectError(
          render,
          403,
          "Insufficient permissions. Required scope(s): reports:write, reports:read",
          'Bearer realm="platform", error="insufficient_scope", error_description="Insufficient permissions. Required scope(s): reports:write, reports:read", scope="reports:write reports:read"',
        );
        expect(
          (
            await call(url, "/reports/r1/render", {
              method: "POST",
              token: await hs({ scopes: ["reports:r1:write", "reports:read"] }),
            })
          ).status,
        ).toBe(200);
        expect((await call(url, "/agents/a1", { method: "DELETE", token: await hs({}) })).status).toBe(200);
        expect((await call(url, "/teams/t1", { method: "DELETE", token: await hs({}) })).status).toBe(403);
      });
    });

    it("adminScope, and unmapped routes denied by default (allow only when asked)", async () => {
      await withServer(adapter, { ...HS(), authorization: true, adminScope: "root" }, async (url) => {
        expect(
          (await call(url, "/teams/t1", { method: "DELETE", token: await hs({ scopes: ["root"] }) })).status,
        ).toBe(200);
        expect(
          (
            await call(url, "/teams/t1", {
              method: "DELETE",
              token: await hs({ scopes: ["platform:admin"] }),
            })
          ).status,
        ).toBe(403);
        const unmapped = await call(url, "/unmapped/x%41%3b", {
          method: "PUT",
          token: await hs({ scopes: ["agents:read"] }),
        });
        const detail =
          "Insufficient permissions. No scope mapping for PUT /unmapped/xA%3B: add one to scopeMappings";
        expectError(
          unmapped,
          403,
          detail,
          `Bearer realm="platform", error="insufficient_scope", error_description="${detail}"`,
        );
        expect((await call(url, "/unmapped", { token: await hs({ scopes: ["root"] }) })).status).toBe(200);
      });
      await withServer(adapter, { ...HS(), authorization: true, unmappedRoutes: "allow" }, async (url) => {
        expect((await call(url, "/unmapped", { token: await hs({}) })).status).toBe(200);
      });
    });
  });

  it("skips excluded paths (trailing slash too) and CORS preflights, not other OPTIONS", async () => {
    await withServer(adapter, { ...HS(), authorization: true }, async (url) => {
      for (const path of [
        "/",
        "/health",
        "/health/",
        "/docs",
        "/redoc",
        "/openapi.json",
        "/docs/oauth2-redirect",
      ]) {
        const answer = await call(url, path);
        expect(answer.status, path).toBe(200);
        expect(answer.body.auth?.authenticated).toBe(false);
      }
      expect((await call(url, "/healthz")).status).toBe(401);
      expect((await call(url, "/agents", { method: "OPTIONS" })).status).toBe(401);
      const preflight = { origin: "https://app.example", "access-control-request-method": "POST" };
      const answer = await call(url, "/agents", { method: "OPTIONS", headers: preflight });
      expect(answer.status).toBe(200);
      expect(answer.body.auth?.authenticated).toBe(false);
    });
    await withServer(adapter, { ...HS(), excludedRoutePaths: ["/public/**", "/status"] }, async (url) => {
      expect((await call(url, "/public/a/b")).status).toBe(200);
      expect((await call(url, "/status/")).status).toBe(200);
      expect((await call(url, "/health")).status).toBe(401);
    });
  });

  it("a generic app: defaultScopeMappings false and excludedRoutePaths [] keep only the app's own table", async () => {
    const options = {
      ...HS(),
      defaultScopeMappings: false,
      excludedRoutePaths: [],
      unmappedRoutes: "allow",
      scopeMappings: { "GET /reports/*": ["reports:read"] },
    } satisfies JwtRbacOptions;
    await withServer(adapter, options, async (url) => {
      const token = await hs({ sub: "u", scope: "reports:read" });
      const noScopes = await hs({ sub: "u" });
      // No platform table: /agents is unmapped (allowed), /docs and /health are not public.
      expect((await call(url, "/agents", { token: noScopes })).status).toBe(200);
      expect((await call(url, "/docs")).status).toBe(401);
      expect((await call(url, "/health")).status).toBe(401);
      expect((await call(url, "/reports/r1", { token: noScopes })).status).toBe(403);
      expect((await call(url, "/reports/r1", { token })).status).toBe(403);
    });
    await withServer(adapter, { ...options, scopesClaim: "scope" }, async (url) => {
      expect(
        (await call(url, "/reports/r1", { token: await hs({ sub: "u", scope: "openid reports:read" }) }))
          .status,
      ).toBe(200);
    });
    // The platform defaults stay the default.
    await withServer(adapter, { ...HS(), authorization: true }, async (url) => {
      expect((await call(url, "/sessions", { token: await hs({ sub: "u" }) })).status).toBe(403);
      expect((await call(url, "/docs")).status).toBe(200);
    });
  });

  it("a generic app's own policy: no platform route, listing, public path or legacy name", async () => {
    const options = {
      ...HS(),
      policy: {
        scopeMappings: { "GET /reports": ["reports:read"], "GET /config": ["config:read"] },
        excludedRoutePaths: ["/healthz"],
      },
    } satisfies JwtRbacOptions;
    await withServer(adapter, options, async (url) => {
      const status = async (path: string, scopes?: string[]) =>
        (await call(url, path, scopes === undefined ? {} : { token: await hs({ sub: "u", scopes }) })).status;
      expect(await status("/healthz")).toBe(200);
      expect(await status("/docs")).toBe(401);
      expect(await status("/reports", ["reports:read"])).toBe(200);
      expect(await status("/reports", ["reports:r1:read"])).toBe(403);
      // /agents is no listing here, and unmapped: denied but to the admin scope.
      expect(await status("/agents", ["agents:read"])).toBe(403);
      expect(await status("/agents", ["platform:admin"])).toBe(200);
      expect(await status("/config", ["system:read"])).toBe(403);
    });
  });

  it("adds resource_metadata to every 401 and 403 challenge (RFC 9728)", async () => {
    const metadata = "https://api.example/.well-known/oauth-protected-resource";
    await withServer(
      adapter,
      {
        ...HS(),
        defaultScopeMappings: false,
        scopeMappings: { "GET /r": ["r:read"] },
        resourceMetadata: metadata,
      },
      async (url) => {
        const suffix = `, resource_metadata="${metadata}"`;
        expect((await call(url, "/r")).challenge).toBe(`Bearer realm="platform"${suffix}`);
        expect((await call(url, "/r", { token: "nope" })).challenge).toBe(
          `${invalid("Invalid token: malformed JWT")}${suffix}`,
        );
        const forbidden = await call(url, "/r", { token: await hs({ sub: "u" }) });
        expect(forbidden.status).toBe(403);
        expect(forbidden.challenge).toMatch(
          /^Bearer realm="platform", error="insufficient_scope", .*scope="r:read", resource_metadata="https:\/\/api.example\/.well-known\/oauth-protected-resource"$/,
        );
      },
    );
  });

  it("caches verified tokens, and works with the cache off", async () => {
    for (const cache of [undefined, false] as const) {
      await withServer(adapter, { ...HS(), ...(cache === undefined ? {} : { cache }) }, async (url) => {
        const token = await hs({ sub: "c" });
        expect((await call(url, "/x", { token })).status).toBe(200);
        expect((await call(url, "/x", { token })).body.auth?.userId).toBe("c");
      });
    }
  });

  it("logs reasons through the logger, never the token", async () => {
    const { logger, records } = recordingLogger();
    await withServer(adapter, { ...HS(), logger }, async (url) => {
      const token = await sign({ sub: "x" }, "HS256", "wrong-secret-wrong-secret-wrong-secret");
      expect((await call(url, "/x", { token })).status).toBe(401);
      expect(records.some((record) => record.msg?.includes("invalid_signature"))).toBe(true);
      expect(JSON.stringify(records)).not.toContain(token.split(".")[2]);
    });
  });

  it("answers every hostile token with a 401, never a 500 or a pass", async () => {
    const corpus = await hostileTokens(keys, "http://127.0.0.1:9");
    await withServer(adapter, hostileOptions(keys), async (url) => {
      for (const entry of corpus) {
        const answer = await call(url, "/x", { token: entry.token });
        if (entry.token.length > 16 * 1024) {
          // Node's HTTP parser refuses headers over 16 KiB (431) before any middleware runs;
          // the core's own bound is tested in test/verifiers.test.ts.
          expect([401, 431], entry.name).toContain(answer.status);
          continue;
        }
        expect(answer.status, entry.name).toBe(401);
        expect(answer.body.error_code, entry.name).toBe("UNAUTHENTICATED");
        expect(answer.challenge, entry.name).toMatch(/^Bearer realm="platform", error="invalid_token"/);
        expect(JSON.stringify(answer.body), entry.name).not.toContain(entry.token.slice(0, 40));
      }
    });
  });
});
