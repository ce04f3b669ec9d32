import { type StubServer, startStubServer } from "@agent-platform/test-support/stub-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/verify/signature-types.js";
import { hostileOptions, hostileTokens } from "./fixtures/hostile-tokens.js";
import { NOW_S, sign, type TestKeys, testKeys } from "./fixtures/keys.js";

// Every case runs against both signature verifiers; each expects one exact outcome, so they agree.
const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];

let keys: TestKeys;
let trap: StubServer;
let jwksServer: StubServer;

beforeAll(async () => {
  keys = await testKeys();
  [trap, jwksServer] = await Promise.all([startStubServer(), startStubServer()]);
});
afterAll(() => Promise.all([trap.close(), jwksServer.close()]));

async function authOn(runtime: Runtime, options: JwtRbacOptions) {
  const auth = createJwtAuthOn(runtime, { cache: false, ...options });
  await auth.ready;
  return auth;
}

async function outcome(runtime: Runtime, options: JwtRbacOptions, token: string) {
  const auth = await authOn(runtime, options);
  const result = await auth.authenticate({
    method: "GET",
    path: "/x",
    headers: { authorization: `Bearer ${token}` },
  });
  return result.ok
    ? { ok: true as const, userId: result.state.userId }
    : { ok: false as const, reason: result.error.reason, status: result.error.status };
}

describe.each(RUNTIMES)("verifier %s", (_name, runtime) => {
  it("reports which verifier it is", async () => {
    const auth = await authOn(runtime, { algorithm: "HS256", verificationKeys: [keys.hsSecret] });
    expect(auth.verifier).toBe(runtime === nodeRuntime ? "node:crypto" : "webcrypto");
  });

  describe("hostile tokens: each is a 401 with its reason, never a pass or a crash", async () => {
    const corpus = await hostileTokens(await testKeys(), "http://127.0.0.1:9");
    it.each(corpus.map((entry) => [entry.name, entry] as const))("%s", async (_label, entry) => {
      const tokens = await hostileTokens(keys, trap.url);
      const token = tokens.find((candidate) => candidate.name === entry.name)?.token as string;
      expect(await outcome(runtime, hostileOptions(keys), token)).toEqual({
        ok: false,
        reason: entry.reason,
        status: 401,
      });
    });
    it("never fetched an embedded jku / x5u", () => {
      expect(trap.requests).toHaveLength(0);
    });
  });

  it("refuses HS256 forged with the public key even when HS256 and RS256 are both allowed", async () => {
    const tokens = await hostileTokens(keys, trap.url);
    const forged = tokens.find((entry) => entry.name.startsWith("HS256 signed with"))?.token as string;
    const options = { algorithms: ["RS256", "HS256"], verificationKeys: [keys.rs256.publicPem] };
    expect(await outcome(runtime, options, forged)).toMatchObject({
      ok: false,
      reason: "invalid_signature",
    });
  });

  describe("algorithm matrix", () => {
    const cases = [
      ["HS256 secret", "HS256", () => ({ verificationKeys: [keys.hsSecret] }), () => keys.hsSecret],
      ["HS512 secret", "HS512", () => ({ verificationKeys: [keys.hsSecret] }), () => keys.hsSecret],
      [
        "RS256 PEM SPKI",
        "RS256",
        () => ({ verificationKeys: [keys.rs256.publicPem] }),
        () => keys.rs256.privateKey,
      ],
      [
        "RS256 X.509 certificate",
        "RS256",
        () => ({ verificationKeys: [keys.certificatePem] }),
        () => keys.certificateKey,
      ],
      [
        "RS256 JWK JSON",
        "RS256",
        () => ({ verificationKeys: [JSON.stringify(keys.rs256.publicJwk)] }),
        () => keys.rs256.privateKey,
      ],
      [
        "PS256 PEM SPKI",
        "PS256",
        () => ({ verificationKeys: [keys.ps256.publicPem] }),
        () => keys.ps256.privateKey,
      ],
      [
        "ES256 PEM SPKI",
        "ES256",
        () => ({ verificationKeys: [keys.es256.publicPem] }),
        () => keys.es256.privateKey,
      ],
      [
        "ES256 JWK JSON",
        "ES256",
        () => ({ verificationKeys: [JSON.stringify(keys.es256.publicJwk)] }),
        () => keys.es256.privateKey,
      ],
      [
        "EdDSA PEM SPKI",
        "EdDSA",
        () => ({ verificationKeys: [keys.eddsa.publicPem] }),
        () => keys.eddsa.privateKey,
      ],
    ] as const;

    it.each(cases)("%s: accepts a good token, refuses a tampered one", async (_label, alg, options, key) => {
      const config = { algorithm: alg, ...options() };
      const token = await sign({ sub: "u1" }, alg, key());
      expect(await outcome(runtime, config, token)).toEqual({ ok: true, userId: "u1" });
      const [h, p, s] = token.split(".") as [string, string, string];
      const flipped = `${s.slice(0, 10)}${s[10] === "A" ? "B" : "A"}${s.slice(11)}`;
      expect(await outcome(runtime, config, `${h}.${p}.${flipped}`)).toMatchObject({
        ok: false,
        reason: "invalid_signature",
      });
      const otherPayload = Buffer.from(JSON.stringify({ sub: "admin" })).toString("base64url");
      expect(await outcome(runtime, config, `${h}.${otherPayload}.${s}`)).toMatchObject({
        ok: false,
        reason: "invalid_signature",
      });
    });

    it("refuses an HS256 token signed with another secret", async () => {
      const token = await sign({ sub: "u1" }, "HS256", "another-secret-that-is-long-enough-too!!");
      expect(
        await outcome(runtime, { algorithm: "HS256", verificationKeys: [keys.hsSecret] }, token),
      ).toMatchObject({
        ok: false,
        reason: "invalid_signature",
      });
    });
  });

  it("tries keys in order until one verifies (several issuers)", async () => {
    const options = { verificationKeys: [keys.rs256b.publicPem, keys.rs256.publicPem] };
    expect(await outcome(runtime, options, await sign({ sub: "a" }, "RS256", keys.rs256.privateKey))).toEqual(
      { ok: true, userId: "a" },
    );
    expect(
      await outcome(runtime, options, await sign({ sub: "b" }, "RS256", keys.rs256b.privateKey)),
    ).toEqual({ ok: true, userId: "b" });
    expect(
      await outcome(runtime, options, await sign({ sub: "c" }, "RS256", keys.certificateKey)),
    ).toMatchObject({ ok: false });
  });

  it("verifies several algorithms, each key only for its own type", async () => {
    const options = {
      algorithms: ["RS256", "ES256", "HS256"],
      verificationKeys: [keys.rs256.publicPem, keys.es256.publicPem, keys.hsSecret],
    };
    expect(await outcome(runtime, options, await sign({ sub: "r" }, "RS256", keys.rs256.privateKey))).toEqual(
      { ok: true, userId: "r" },
    );
    expect(await outcome(runtime, options, await sign({ sub: "e" }, "ES256", keys.es256.privateKey))).toEqual(
      { ok: true, userId: "e" },
    );
    expect(await outcome(runtime, options, await sign({ sub: "h" }, "HS256", keys.hsSecret))).toEqual({
      ok: true,
      userId: "h",
    });
  });

  describe("JWKS", () => {
    const jwks = () => ({
      keys: [
        { ...keys.rs256.publicJwk, kid: "k1", use: "sig", alg: "RS256" },
        { ...keys.rs256b.publicJwk, kid: "k2", use: "sig", alg: "RS256" },
        { ...keys.es256.publicJwk, kid: "k3", use: "sig", alg: "ES256" },
      ],
    });

    it("picks the key by kid; an unknown kid is a 401", async () => {
      const options = { jwks: jwks() };
      expect(
        await outcome(
          runtime,
          options,
          await sign({ sub: "1" }, "RS256", keys.rs256.privateKey, { kid: "k1" }),
        ),
      ).toEqual({ ok: true, userId: "1" });
      expect(
        await outcome(
          runtime,
          options,
          await sign({ sub: "2" }, "RS256", keys.rs256b.privateKey, { kid: "k2" }),
        ),
      ).toEqual({ ok: true, userId: "2" });
      expect(
        await outcome(
          runtime,
          options,
          await sign({ sub: "x" }, "RS256", keys.rs256b.privateKey, { kid: "k1" }),
        ),
      ).toMatchObject({ reason: "invalid_signature" });
      expect(
        await outcome(
          runtime,
          options,
          await sign({ sub: "x" }, "RS256", keys.rs256.privateKey, { kid: "nope" }),
        ),
      ).toEqual({ ok: false, reason: "unknown_kid", status: 401 });
      // k3 is an ES256 key: with RS256 configured it is not used, whatever the header says.
      expect(
        await outcome(
          runtime,
          options,
          await sign({ sub: "x" }, "ES256", keys.es256.privateKey, { kid: "k3" }),
        ),
      ).toMatchObject({ reason: "algorithm_not_allowed" });
    });

    it("fetches a remote JWKS once and then picks by kid", async () => {
      jwksServer.answer = { body: jwks() };
      const before = jwksServer.requests.length;
      const auth = await authOn(runtime, { jwksUrl: `${jwksServer.url}/.well-known/jwks.json` });
      for (const kid of ["k1", "k1", "k2"]) {
        const key = kid === "k1" ? keys.rs256.privateKey : keys.rs256b.privateKey;
        const token = await sign({ sub: kid }, "RS256", key, { kid });
        const result = await auth.authenticate({
          method: "GET",
          path: "/x",
          headers: { authorization: `Bearer ${token}` },
        });
        expect(result.ok && result.state.userId).toBe(kid);
      }
      expect(jwksServer.requests.length - before).toBe(1);
      const forged = await sign({ sub: "x" }, "RS256", keys.certificateKey, { kid: "k1" });
      const result = await auth.authenticate({
        method: "GET",
        path: "/x",
        headers: { authorization: `Bearer ${forged}` },
      });
      expect(result.ok || result.error.reason).toBe("invalid_signature");
    });
  });

  describe("every other spelling of a good signature is refused, the same in both builds", () => {
    const SEXTETS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    /** The signature with its last character's unused low bits set: other text, the same bytes. */
    const sameBytes = (signature: string) => {
      const unused = [0, 0, 0x0f, 0x03][signature.length % 4] as number;
      const last = SEXTETS.indexOf(signature.at(-1) as string);
      return unused === 0 ? undefined : `${signature.slice(0, -1)}${SEXTETS[last | unused]}`;
    };
    const ALGS = [
      ["HS256", () => keys.hsSecret, () => keys.hsSecret],
      ["RS256", () => keys.rs256.privateKey, () => keys.rs256.publicPem],
      ["PS256", () => keys.ps256.privateKey, () => keys.ps256.publicPem],
      ["ES256", () => keys.es256.privateKey, () => keys.es256.publicPem],
      ["EdDSA", () => keys.eddsa.privateKey, () => keys.eddsa.publicPem],
    ] as const;
    it.each(ALGS)("%s", async (alg, signingKey, verificationKey) => {
      const options = { algorithm: alg, verificationKeys: [verificationKey()] };
      const token = await sign({ sub: "u1" }, alg, signingKey());
      const dot = token.lastIndexOf(".");
      const [input, signature] = [token.slice(0, dot), token.slice(dot + 1)];
      const flipped = SEXTETS[(SEXTETS.indexOf(signature[5] as string) + 1) % 64] as string;
      const cases: [string, string | undefined, string][] = [
        ["other text for the same bytes", sameBytes(signature), "malformed"],
        ["padded", `${signature}=`.padEnd(Math.ceil(signature.length / 4) * 4, "="), "malformed"],
        ["in the base64 alphabet", signature.replace(/-/g, "+").replace(/_/g, "/"), "malformed"],
        // A space or tab at the end is HTTP whitespace around the header value, trimmed as the header's, not the token's.
        ["with a space inside", `${signature.slice(0, 5)} ${signature.slice(5)}`, "malformed"],
        ["with a trailing NUL", `${signature}\u0000`, "malformed"],
        ["with a non-ASCII letter", `${signature.slice(0, -1)}\u00e9`, "malformed"],
        [
          "one character changed",
          `${signature.slice(0, 5)}${flipped}${signature.slice(6)}`,
          "invalid_signature",
        ],
        ["one byte longer", `${signature}AAAA`, "invalid_signature"],
        ["empty", "", "invalid_signature"],
      ];
      expect(await outcome(runtime, options, token)).toEqual({ ok: true, userId: "u1" });
      for (const [label, variant, reason] of cases) {
        // Some spellings do not exist for every length (no unused bits, no '-' or '_' to swap).
        if (variant === undefined || variant === signature) continue;
        expect(await outcome(runtime, options, `${input}.${variant}`), label).toEqual({
          ok: false,
          reason,
          status: 401,
        });
      }
    });
  });

  it("validate:false decodes without verifying, but still refuses what cannot be decoded", async () => {
    const options = { validate: false };
    const unsigned = await sign(
      { sub: "dev", exp: NOW_S() - 3600 },
      "HS256",
      "whatever-secret-whatever-secret!!",
    );
    expect(await outcome(runtime, options, unsigned)).toEqual({ ok: true, userId: "dev" });
    expect(await outcome(runtime, options, "not.a-token")).toMatchObject({ ok: false, reason: "malformed" });
  });
});
