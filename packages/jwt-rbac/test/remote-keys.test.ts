import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/verify/signature-types.js";
import { NOW_S } from "./fixtures/keys.js";
import { type OidcProvider, type ProviderKey, providerKey, startProvider } from "./fixtures/oidc-provider.js";

// Every row runs against both signature verifiers, over real HTTP against the stand-in provider.
const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `condition` holds (a background fetch has landed), failing after a while. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(10);
  expect(condition()).toBe(true);
}

/** A runtime whose verifier counts signature checks: a cache hit costs none. */
function counting(runtime: Runtime): { runtime: Runtime; verifications: () => number } {
  let count = 0;
  const verifier = runtime.verifier;
  return {
    verifications: () => count,
    runtime: {
      ...runtime,
      verifier: {
        ...verifier,
        verify: (...args: Parameters<typeof verifier.verify>) => {
          count++;
          return verifier.verify(...args);
        },
      },
    },
  };
}

describe.each(RUNTIMES)("remote keys, verifier %s", (_name, basePlatform) => {
  let idp: OidcProvider;
  beforeEach(async () => {
    idp = await startProvider();
  });
  afterEach(async () => {
    await idp.close();
  });

  function create(options: JwtRbacOptions, runtime: Runtime = basePlatform) {
    return createJwtAuthOn(runtime, { jwksUrl: idp.jwksUrl, ...options });
  }
  async function check(auth: ReturnType<typeof create>, token: string) {
    const result = await auth.authenticate({
      method: "GET",
      path: "/x",
      headers: { authorization: `Bearer ${token}` },
    });
    return result.ok ? `ok:${result.state.userId}` : result.error.reason;
  }

  it("serves a jwksUrl token from the verified-token cache exactly as an inline-key token", async () => {
    const remote = counting(basePlatform);
    const inline = counting(basePlatform);
    const viaUrl = create({}, remote.runtime);
    const viaJwks = createJwtAuthOn(inline.runtime, {
      jwks: { keys: idp.keys.map((key) => key.publicJwk) },
    });
    const token = await idp.sign({ sub: "u1" });
    for (let i = 0; i < 100; i++) {
      expect(await check(viaUrl, token)).toBe("ok:u1");
      expect(await check(viaJwks, token)).toBe("ok:u1");
    }
    // Admitted on its second sighting, then served from the cache: two signature checks in 100 requests.
    expect(remote.verifications()).toBe(2);
    expect(remote.verifications()).toBe(inline.verifications());
    expect(idp.count("jwks")).toBe(1);
  });

  it("clears the cache when the key set's content changes, not when the same set is fetched again", async () => {
    const { runtime, verifications } = counting(basePlatform);
    const auth = create({ remoteKeys: { cooldownMs: 50 } }, runtime);
    const token = await idp.sign({ sub: "u1" });
    for (let i = 0; i < 3; i++) await check(auth, token);
    expect(verifications()).toBe(2);

    // An unknown kid after the cooldown refetches: the same keys, so the cache stays.
    await sleep(80);
    expect(await check(auth, await idp.sign({ sub: "x" }, { kid: "made-up" }))).toBe("unknown_kid");
    expect(idp.count("jwks")).toBe(2);
    expect(await check(auth, token)).toBe("ok:u1");
    expect(verifications()).toBe(2);

    // A new key published: content changed, cached tokens are verified again.
    const rotated = await idp.rotate();
    await sleep(80);
    expect(await check(auth, await idp.sign({ sub: "u2" }, { key: rotated }))).toBe("ok:u2");
    expect(idp.count("jwks")).toBe(3);
    const before = verifications();
    expect(await check(auth, token)).toBe("ok:u1");
    expect(verifications()).toBe(before + 1);
  });

  it("has at most one fetch in flight", async () => {
    const auth = create({});
    const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => idp.sign({ sub: `u${i}` })));
    const answers = await Promise.all(tokens.map((token) => check(auth, token)));
    expect(answers).toEqual(tokens.map((_, i) => `ok:u${i}`));
    expect(idp.count("jwks")).toBe(1);
  });

  it("never fetches for a token that fails before the key lookup", async () => {
    const auth = create({ algorithms: ["RS256"], issuer: idp.issuer });
    const good = await idp.sign({ sub: "u1" });
    const [header, payload] = good.split(".") as [string, string];
    const refused = [
      ["not-a-jwt", "malformed"],
      [`${header}.${payload}`, "malformed"],
      [`${Buffer.from('{"alg":"none"}').toString("base64url")}.${payload}.`, "algorithm_not_allowed"],
      [await idp.sign({ sub: "u1", iss: "https://other.example" }), "invalid_issuer"],
      [await idp.sign({ sub: "u1", iss: undefined as unknown as string }), "invalid_issuer"],
    ] as const;
    for (const [token, reason] of refused) expect(await check(auth, token)).toBe(reason);
    expect(idp.count("jwks")).toBe(0);
  });

  it("remembers a failed fetch for the cooldown: a flood while the endpoint is down costs one fetch", async () => {
    idp.mode = "down";
    const { warnings, logger } = recordingLogger();
    const auth = create({ logger });
    const tokens = await Promise.all(
      Array.from({ length: 50 }, (_, i) => idp.sign({ sub: "x" }, { kid: i % 2 ? `kid-${i}` : null })),
    );
    for (const token of tokens) expect(await check(auth, token)).toBe("key_unavailable");
    expect(idp.count("jwks")).toBe(1);
    expect(warnings.filter((line) => line.includes("unavailable"))).toHaveLength(1);
    expect(warnings[0]).toMatch(/HTTP 503\); no keys yet/);
  });

  it("tries every matching key for a token without kid (rotation overlap)", async () => {
    const second = await idp.rotate();
    const auth = create({});
    expect(await check(auth, await idp.sign({ sub: "new" }, { key: second, kid: null }))).toBe("ok:new");
    const first = idp.keys[0] as ProviderKey;
    expect(await check(auth, await idp.sign({ sub: "old" }, { key: first, kid: null }))).toBe("ok:old");
  });

  it("gives up after the timeout, and answers key_unavailable", async () => {
    idp.mode = "hang";
    const { warnings, logger } = recordingLogger();
    const auth = create({ logger, remoteKeys: { timeoutMs: 200 } });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("key_unavailable");
    expect(warnings.join("\n")).toMatch(/no complete answer within 200 ms/);
  });

  it("cuts an oversized JWKS off while reading it and keeps the old keys", async () => {
    const { warnings, logger } = recordingLogger();
    const auth = create({ logger, remoteKeys: { cooldownMs: 50, maxBytes: 256 * 1024 } });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("ok:u1");
    idp.mode = "endless";
    await sleep(80);
    expect(await check(auth, await idp.sign({ sub: "x" }, { kid: "made-up" }))).toBe("unknown_kid");
    expect(warnings.join("\n")).toMatch(/larger than 262144 bytes\); keeping the last good keys/);
    // The endless body was read only up to about the cap (plus socket buffers), never to the end.
    expect(idp.endlessBytes()).toBeLessThan(16 * 1024 * 1024);
    expect(await check(auth, await idp.sign({ sub: "u2" }))).toBe("ok:u2");
  });

  it("refuses a JWKS with too many keys, skips odd keys and keeps the rest", async () => {
    const { warnings, logger } = recordingLogger();
    idp.extraKeys = [
      { kty: "oct", k: "c2VjcmV0", kid: "hmac" },
      { ...idp.keys[0]?.publicJwk, kid: "k".repeat(300) },
      "not an object",
    ];
    const auth = create({ logger });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("ok:u1");
    expect(warnings.filter((line) => line.includes("skipped"))).toHaveLength(3);

    const crowded = await startProvider();
    crowded.extraKeys = Array.from({ length: 100 }, () => crowded.keys[0]?.publicJwk);
    const crowdedAuth = createJwtAuthOn(basePlatform, { jwksUrl: crowded.jwksUrl, logger });
    expect(await check(crowdedAuth, await crowded.sign({ sub: "u1" }))).toBe("key_unavailable");
    expect(warnings.join("\n")).toMatch(/more than 100 keys/);
    await crowded.close();
  });

  it("follows no redirect to another origin: off the machine, or another port of it (redirects.test.ts for more)", async () => {
    const { warnings, logger } = recordingLogger();
    idp.redirect = "http://169.254.169.254/latest/jwks";
    const auth = create({ logger });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("key_unavailable");
    expect(warnings.join("\n")).toMatch(/redirect refused \(http:\/\/169.254.169.254\/latest\/jwks\)/);

    const target = await startProvider();
    idp.redirect = target.jwksUrl;
    const refused = create({ logger });
    expect(await check(refused, await target.sign({ sub: "u2" }))).toBe("key_unavailable");
    expect(target.count("jwks")).toBe(0);
    await target.close();
  });

  it("honours Cache-Control max-age: a key set past it is refetched on next use, without making it wait", async () => {
    idp.cacheControl = "public, max-age=2";
    const auth = create({ remoteKeys: { cooldownMs: 100 } });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("ok:u1");
    await sleep(300);
    expect(await check(auth, await idp.sign({ sub: "u2" }))).toBe("ok:u2");
    expect(idp.count("jwks")).toBe(1);
    await sleep(1800);
    expect(await check(auth, await idp.sign({ sub: "u3" }))).toBe("ok:u3");
    await until(() => idp.count("jwks") === 2);
  });

  it("refetches for unknown kids at most once per cooldown, and picks up a rotated key after it", async () => {
    // Everything slow (key generation, signing) happens before the clock matters.
    const next = await providerKey();
    const first = await idp.sign({ sub: "u1" });
    const madeUp = await Promise.all(
      Array.from({ length: 30 }, (_, i) => idp.sign({ sub: "x" }, { kid: `made-up-${i}` })),
    );
    const auth = create({ remoteKeys: { cooldownMs: 1000 } });
    expect(await check(auth, first)).toBe("ok:u1");
    expect(await Promise.all(madeUp.map((token) => check(auth, token)))).toEqual(
      madeUp.map(() => "unknown_kid"),
    );
    expect(idp.count("jwks")).toBe(1);

    await sleep(1100);
    expect(await Promise.all(madeUp.map((token) => check(auth, token)))).toEqual(
      madeUp.map(() => "unknown_kid"),
    );
    expect(idp.count("jwks")).toBe(2);

    // Published right after that refetch: unknown until the cooldown has passed, then picked up on first use.
    const rotated = await idp.rotate(next);
    const fresh = await idp.sign({ sub: "u2" }, { key: rotated });
    expect(await check(auth, fresh)).toBe("unknown_kid");
    expect(idp.count("jwks")).toBe(2);
    await sleep(1100);
    expect(await check(auth, fresh)).toBe("ok:u2");
    expect(idp.count("jwks")).toBe(3);
  });

  it("keeps verifying with the last good keys while the endpoint is down, logging once per failure streak", async () => {
    idp.cacheControl = "max-age=0";
    const { warnings, logger } = recordingLogger();
    const auth = create({ logger, remoteKeys: { cooldownMs: 50 } });
    expect(await check(auth, await idp.sign({ sub: "u0" }))).toBe("ok:u0");
    idp.mode = "down";
    for (let i = 1; i <= 4; i++) {
      await sleep(70);
      expect(await check(auth, await idp.sign({ sub: `u${i}` }))).toBe(`ok:u${i}`);
      await until(() => idp.count("jwks") === i + 1);
    }
    const streak = () => warnings.filter((line) => line.includes("keeping the last good keys"));
    await until(() => streak().length === 1);
    idp.mode = "up";
    await sleep(70);
    await check(auth, await idp.sign({ sub: "u5" }));
    await until(() => warnings.some((line) => line.includes("failure streak over")));
    idp.mode = "down";
    await sleep(70);
    await check(auth, await idp.sign({ sub: "u6" }));
    await until(() => streak().length === 2);
  });

  it("answers key_unavailable while no key set was ever fetched, with or without kid", async () => {
    idp.mode = "down";
    const auth = create({ remoteKeys: { cooldownMs: 0 } });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("key_unavailable");
    expect(await check(auth, await idp.sign({ sub: "u1" }, { kid: null }))).toBe("key_unavailable");
    idp.mode = "up";
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("ok:u1");
  });

  it("finds the JWKS through OIDC discovery, read once", async () => {
    const auth = createJwtAuthOn(basePlatform, {
      issuer: idp.issuer,
      discovery: true,
      remoteKeys: { cooldownMs: 50 },
    });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("ok:u1");
    const rotated = await idp.rotate();
    await sleep(80);
    expect(await check(auth, await idp.sign({ sub: "u2" }, { key: rotated }))).toBe("ok:u2");
    expect(idp.count("jwks")).toBe(2);
    expect(idp.count("discovery")).toBe(1);
  });

  it("refuses a discovery document that names another issuer", async () => {
    idp.discoveryIssuer = "https://evil.example/realms/test";
    const { warnings, logger } = recordingLogger();
    const auth = createJwtAuthOn(basePlatform, { issuer: idp.issuer, discovery: true, logger });
    expect(await check(auth, await idp.sign({ sub: "u1" }))).toBe("key_unavailable");
    expect(idp.count("jwks")).toBe(0);
    expect(warnings.join("\n")).toContain(
      `issuer: the discovery document at ${idp.issuer}/.well-known/openid-configuration names "https://evil.example/realms/test", not the configured issuer "${idp.issuer}"`,
    );
  });

  it("still checks the time claims of a token verified by a fetched key", async () => {
    const auth = create({});
    expect(await check(auth, await idp.sign({ sub: "u1", exp: NOW_S() - 3600 }))).toBe("expired");
  });
});
