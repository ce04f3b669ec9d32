import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import { ConfigError, type JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { MOUNTED_ADAPTERS, startMounted } from "./fixtures/mounted.js";

// RFC 7662 over real HTTP: a stand-in authorization server issues opaque tokens and answers
// introspection (counting requests, able to go down or be slow); every adapter asks it, remembers its
// answers, and applies RBAC to an active token's scopes as to a JWT's.

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer();
});
afterAll(async () => {
  await as.close();
});

const NOW = () => Math.floor(Date.now() / 1000);
const options = (extra: Partial<NonNullable<JwtRbacOptions["introspection"]>> = {}): JwtRbacOptions => ({
  algorithm: "ES256",
  issuer: as.issuer,
  jwksUrl: as.jwksUrl,
  audience: "api://platform",
  scopesClaim: "scope",
  authorization: true,
  defaultScopeMappings: false,
  scopeMappings: { "GET /agents": ["agents:read"], "POST /agents": ["agents:write"] },
  introspection: {
    url: as.introspectionUrl,
    clientAuth: { method: "client_secret_basic", clientId: as.client.id, clientSecret: as.client.secret },
    ...extra,
  },
});

async function call(url: string, token: string, method = "GET") {
  const response = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

const active = (extra: Record<string, unknown> = {}) =>
  as.opaque({
    sub: "svc-1",
    scope: "agents:read",
    aud: "api://platform",
    client_id: "cli",
    exp: NOW() + 600,
    ...extra,
  });

describe.each(MOUNTED_ADAPTERS)("introspection over HTTP, %s", (adapter) => {
  it("fills the state from an active answer, applies RBAC, remembers the answer", async () => {
    const server = await startMounted(adapter, options());
    try {
      const token = active();
      const before = as.count("introspect");
      const ok = await call(`${server.url}/agents`, token);
      expect(ok.status).toBe(200);
      expect(ok.body.auth).toMatchObject({
        authenticated: true,
        userId: "svc-1",
        scopes: ["agents:read"],
        audience: "api://platform",
        claims: { client_id: "cli", sub: "svc-1" },
      });
      for (let i = 0; i < 5; i++) expect((await call(`${server.url}/agents`, token)).status).toBe(200);
      // RBAC as for a JWT.
      const forbidden = await call(`${server.url}/agents`, token, "POST");
      expect(forbidden.status).toBe(403);
      expect(as.count("introspect") - before).toBe(1);
      // Inactive: the exact 401, remembered briefly.
      const inactive = await call(`${server.url}/agents`, "made-up-token");
      expect(inactive.status).toBe(401);
      expect(inactive.challenge).toBe(
        'Bearer realm="platform", error="invalid_token", error_description="Invalid token: the token is not active"',
      );
      expect(inactive.body).toEqual({
        detail: "Invalid token: the token is not active",
        error_code: "UNAUTHENTICATED",
      });
      await call(`${server.url}/agents`, "made-up-token");
      expect(as.count("introspect") - before).toBe(2);
      // An active answer for another audience, or expired, is refused as a JWT would be.
      expect((await call(`${server.url}/agents`, active({ aud: "api://other" }))).body.detail).toBe(
        "Invalid token audience",
      );
      expect((await call(`${server.url}/agents`, active({ exp: NOW() - 60 }))).body.detail).toBe(
        "Token has expired",
      );
    } finally {
      await server.close();
    }
  });
});

describe("introspection discipline", () => {
  const core = (extra: Partial<NonNullable<JwtRbacOptions["introspection"]>> = {}, runtime = nodeRuntime) =>
    createJwtAuthOn(runtime, { ...options(extra), cache: false });
  const ask = async (auth: ReturnType<typeof core>, token: string) => {
    const result = await auth.authenticate({
      method: "GET",
      path: "/agents",
      headers: { authorization: `Bearer ${token}` },
    });
    return result.ok ? "ok" : `${result.error.status} ${result.error.reason}`;
  };

  it("asks once for concurrent requests with one token (single flight)", async () => {
    const auth = core();
    const token = active();
    as.mode = "slow";
    as.delayMs = 150;
    try {
      const before = as.count("introspect");
      const answers = await Promise.all(Array.from({ length: 20 }, () => ask(auth, token)));
      expect(new Set(answers)).toEqual(new Set(["ok"]));
      expect(as.count("introspect") - before).toBe(1);
    } finally {
      as.mode = "up";
    }
  });

  it("trusts an answer until min(exp, cacheMaxSec), then asks again (a revoked token is refused)", async () => {
    const auth = core({ cacheMaxSec: 1 });
    const token = active();
    expect(await ask(auth, token)).toBe("ok");
    as.revoke(token);
    expect(await ask(auth, token)).toBe("ok");
    await new Promise((done) => setTimeout(done, 1100));
    expect(await ask(auth, token)).toBe("401 token_inactive");
    const shortLived = active({ exp: NOW() + 1 });
    expect(await ask(auth, shortLived)).toBe("ok");
    await new Promise((done) => setTimeout(done, 1100));
    as.revoke(shortLived);
    expect(await ask(auth, shortLived)).toBe("401 token_inactive");
  });

  it("bounds outbound introspections of made-up tokens to maxPerSecond", async () => {
    const auth = core({ maxPerSecond: 3 });
    const before = as.count("introspect");
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => ask(auth, `flood-${Date.now()}-${i}`)),
    );
    expect(as.count("introspect") - before).toBeLessThanOrEqual(4);
    expect(
      answers.filter((answer) => answer === "401 introspection_unavailable").length,
    ).toBeGreaterThanOrEqual(26);
  });

  it("keeps a known token's refresh out of the strangers' share, and serves its last answer for at most cacheMaxSec more", async () => {
    // maxPerSecond 6: three questions a second (a burst of three) for tokens never answered active, three
    // for asking again about tokens that were.
    const auth = core({ maxPerSecond: 6, cacheMaxSec: 1 });
    const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
    const garbage = () =>
      Promise.all(Array.from({ length: 10 }, (_, i) => ask(auth, `garbage-${Date.now()}-${i}`)));
    const [revoked, k1, k2, stale, k3] = [active(), active(), active(), active(), active()];
    expect(await Promise.all([revoked, k1, k2].map((token) => ask(auth, token)))).toEqual(["ok", "ok", "ok"]);
    // The strangers' share is spent: a new token waits, even a real one.
    expect(await ask(auth, k3)).toBe("401 introspection_unavailable");
    await sleep(350);
    expect(await ask(auth, stale)).toBe("ok");
    as.revoke(revoked);
    await sleep(1100);
    // Every answer is past cacheMaxSec. The strangers spend their share again and are refused.
    expect(await garbage()).toContain("401 introspection_unavailable");
    expect(await ask(auth, k3)).toBe("401 introspection_unavailable");
    // Known tokens are asked about again on their own share: the revocation is seen during the flood.
    const before = as.count("introspect");
    expect(await ask(auth, revoked)).toBe("401 token_inactive");
    expect(await ask(auth, k1)).toBe("ok");
    expect(await ask(auth, k2)).toBe("ok");
    expect(as.count("introspect") - before).toBe(3);
    // Both shares spent: `stale`'s last answer is served without asking.
    expect(await ask(auth, stale)).toBe("ok");
    expect(as.count("introspect") - before).toBe(3);
    await sleep(1000);
    // More than 2 × cacheMaxSec after `stale` was answered: a stranger again, refused while the flood lasts.
    await garbage();
    expect(await ask(auth, stale)).toBe("401 introspection_unavailable");
    expect(await ask(auth, k1)).toBe("ok");
  });

  it("answers 401 (or 503 when configured), never 500, when the endpoint is down, slow or refuses the client", async () => {
    as.mode = "down";
    try {
      expect(await ask(core(), active())).toBe("401 introspection_unavailable");
      const auth503 = core({ unavailableStatus: 503 });
      expect(await ask(auth503, active())).toBe("503 introspection_unavailable");
    } finally {
      as.mode = "up";
    }
    const wrongSecret = core({
      clientAuth: { method: "client_secret_post", clientId: as.client.id, clientSecret: "wrong" },
    });
    expect(await ask(wrongSecret, active())).toBe("401 introspection_unavailable");
    as.mode = "slow";
    as.delayMs = 800;
    try {
      const impatient = createJwtAuthOn(nodeRuntime, { ...options(), remoteKeys: { timeoutMs: 200 } });
      expect(await ask(impatient as ReturnType<typeof core>, active())).toBe("401 introspection_unavailable");
    } finally {
      as.mode = "up";
    }
  });

  it.each([
    ["webcrypto", webRuntime],
    ["node:crypto", nodeRuntime],
  ])(
    "authenticates with client_secret_basic, client_secret_post and private_key_jwt (%s build)",
    async (_name, runtime) => {
      expect(await ask(core({}, runtime), active())).toBe("ok");
      expect(as.lastClientAuth).toBe("client_secret_basic");
      expect(
        await ask(
          core(
            {
              clientAuth: {
                method: "client_secret_post",
                clientId: as.client.id,
                clientSecret: as.client.secret,
              },
            },
            runtime,
          ),
          active(),
        ),
      ).toBe("ok");
      expect(as.lastClientAuth).toBe("client_secret_post");
      const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
      as.privateKeyJwtClient = { id: "rs-jwt", publicJwk: await exportJWK(publicKey) };
      const jwtClient = core(
        {
          clientAuth: {
            method: "private_key_jwt",
            clientId: "rs-jwt",
            privateKey: await exportJWK(privateKey),
          },
        },
        runtime,
      );
      expect(await ask(jwtClient, active())).toBe("ok");
      expect(as.lastClientAuth).toBe("private_key_jwt");
    },
  );

  it("introspects JWTs too when tokenTypes says so, and finds the endpoint by discovery", async () => {
    const { url: _, ...rest } = options().introspection as NonNullable<JwtRbacOptions["introspection"]>;
    const auth = createJwtAuthOn(nodeRuntime, {
      ...options(),
      introspection: { ...rest, discovery: as.issuer, tokenTypes: ["opaque", "jwt"] },
    });
    const { access_token: jwt } = await as.issue({ claims: { aud: "api://platform", scope: "agents:read" } });
    const before = as.count("introspect");
    // The JWT is valid, but the endpoint does not know it: introspection decides.
    expect(await ask(auth as ReturnType<typeof core>, jwt)).toBe("401 token_inactive");
    expect(await ask(auth as ReturnType<typeof core>, active())).toBe("ok");
    expect(as.count("introspect") - before).toBe(2);
  });

  it("refuses bad configuration with a ConfigError naming the option", () => {
    const bad: NonNullable<JwtRbacOptions["introspection"]>[] = [
      { clientAuth: { method: "client_secret_basic", clientId: "a", clientSecret: "b" } },
      {
        url: "http://example.com/introspect",
        clientAuth: { method: "client_secret_basic", clientId: "a", clientSecret: "b" },
      },
      {
        url: as.introspectionUrl,
        clientAuth: { method: "client_secret_basic", clientId: "a", clientSecret: "" },
      },
      { url: as.introspectionUrl, clientAuth: { method: "none", clientId: "a" } as never },
      {
        url: as.introspectionUrl,
        clientAuth: { method: "client_secret_basic", clientId: "a", clientSecret: "b" },
        negativeCacheSec: 3600,
      },
      {
        url: as.introspectionUrl,
        clientAuth: { method: "client_secret_basic", clientId: "a", clientSecret: "b" },
        tokenTypes: [],
      },
    ];
    for (const introspection of bad) {
      expect(() => createJwtAuthOn(nodeRuntime, { ...options(), introspection })).toThrow(ConfigError);
    }
  });
});
