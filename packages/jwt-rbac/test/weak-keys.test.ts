import { createHash, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type StubServer, startStubServer } from "@agent-platform/test-support/stub-server";
import type { JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { ConfigError } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { keyWeakness } from "../src/token/keys/key-strength.js";
import { hasRocaFingerprint } from "../src/token/keys/roca.js";
import { jwksKeyLabel, WeakKeyFilter } from "../src/token/keys/weak-keys.js";
import type { Runtime } from "../src/token/verify/signature-types.js";
import { craft, rsaSigner } from "./fixtures/hostile-tokens.js";
import {
  b64,
  type Case,
  commonProbes,
  describeBuildsAgree,
  fixed,
  presentations,
  rsaCases,
  withSignature,
} from "./fixtures/key-differential.js";
import { NOW_S, selfSignedCertificate, sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import {
  intJwk,
  jwkInt,
  type RsaFixture,
  rocaKeyPair,
  rsaKeyPair,
  withExponent,
} from "./fixtures/weak-keys.js";

// Weak verification keys, every test of them: the rules that call a key weak, one key at a time; what a user
// sees (a configured weak key is a ConfigError, a weak JWKS key is skipped with a warning), on both builds; and
// every weak key class, in every way it can be configured, decided identically by both builds.
const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];

let keys: TestKeys;
let rsa2048: RsaFixture;
let rsa1024: RsaFixture;
let roca: RsaFixture;
let certificate1024: string;
let jwksServer: StubServer;
let jwksUrl: string;

beforeAll(async () => {
  [keys, rsa2048, rsa1024, roca] = await Promise.all([
    testKeys(),
    rsaKeyPair(2048),
    rsaKeyPair(1024),
    rocaKeyPair(),
  ]);
  certificate1024 = (await selfSignedCertificate(rsa1024)).pem;
  jwksServer = await startStubServer();
  jwksUrl = `${jwksServer.url}/jwks.json`;
});
afterAll(() => jwksServer.close());

describe("the rules: which keys are weak, one key at a time", () => {
  /** A public JWK made by node:crypto, an implementation independent of the checks under test. */
  function nodeJwk(type: "ec" | "ed25519", namedCurve?: string): JWK {
    const { publicKey } =
      type === "ec"
        ? generateKeyPairSync("ec", { namedCurve: namedCurve as string })
        : generateKeyPairSync("ed25519");
    return publicKey.export({ format: "jwk" }) as JWK;
  }

  describe("RSA", () => {
    it("accepts a 2048-bit key with e = 65537, and e = 3", () => {
      expect(keyWeakness(rsa2048.publicJwk)).toBeUndefined();
      expect(keyWeakness(withExponent(rsa2048.publicJwk, 3n))).toBeUndefined();
    });

    it("refuses moduli under 2048 bits, counted by value, not by encoded length", () => {
      expect(keyWeakness(rsa1024.publicJwk)).toBe("its RSA modulus has 1024 bits, fewer than 2048");
      const padded = {
        ...rsa1024.publicJwk,
        n: Buffer.concat([
          Buffer.alloc(128),
          Buffer.from(rsa1024.publicJwk.n as string, "base64url"),
        ]).toString("base64url"),
      };
      expect(keyWeakness(padded)).toBe("its RSA modulus has 1024 bits, fewer than 2048");
      const bits2047 = { ...rsa2048.publicJwk, n: intJwk(jwkInt(rsa2048.publicJwk.n as string) >> 1n) };
      expect(keyWeakness(bits2047)).toBe("its RSA modulus has 2047 bits, fewer than 2048");
    });

    it.each([
      [0n, "its RSA public exponent is below 3"],
      [1n, "its RSA public exponent is below 3"],
      [2n, "its RSA public exponent is below 3"],
      [4n, "its RSA public exponent is even"],
      [65536n, "its RSA public exponent is even"],
    ])("refuses e = %s", (e, reason) => {
      expect(keyWeakness(withExponent(rsa2048.publicJwk, e))).toBe(reason);
    });

    it("refuses a ROCA-fingerprinted modulus, and does not flag ordinary ones", () => {
      expect(keyWeakness(roca.publicJwk)).toBe("its RSA modulus has the ROCA fingerprint (CVE-2017-15361)");
      expect(hasRocaFingerprint(jwkInt(rsa2048.publicJwk.n as string))).toBe(false);
      expect(hasRocaFingerprint(jwkInt(rsa1024.publicJwk.n as string))).toBe(false);
      // The fingerprint survives any exponent: it is a property of the modulus alone.
      expect(hasRocaFingerprint(jwkInt(roca.publicJwk.n as string))).toBe(true);
    });

    it("refuses members that are not base64url", () => {
      expect(keyWeakness({ ...rsa2048.publicJwk, n: "not base64url!" })).toBe(
        "its modulus or exponent is not base64url",
      );
      expect(keyWeakness({ kty: "RSA", n: rsa2048.publicJwk.n as string })).toBe(
        "its modulus or exponent is not base64url",
      );
    });
  });

  describe("NIST EC", () => {
    const field = {
      "P-256": 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n,
      "P-384": 2n ** 384n - 2n ** 128n - 2n ** 96n + 2n ** 32n - 1n,
      "P-521": 2n ** 521n - 1n,
    } as const;
    const length = { "P-256": 32, "P-384": 48, "P-521": 66 } as const;
    const pad = (value: bigint, bytes: number) =>
      Buffer.from(value.toString(16).padStart(bytes * 2, "0"), "hex").toString("base64url");

    it.each(Object.keys(field) as (keyof typeof field)[])(
      "%s: accepts node's keys, refuses altered points",
      (crv) => {
        for (let i = 0; i < 3; i++) expect(keyWeakness(nodeJwk("ec", crv))).toBeUndefined();
        const jwk = nodeJwk("ec", crv);
        const y = jwkInt(jwk.y as string);
        expect(keyWeakness({ ...jwk, y: pad((y + 1n) % field[crv], length[crv]) })).toBe(
          `its point is not on ${crv}`,
        );
        // (x, y + p) is (x, y) modulo p: refused as unreduced, where a lax decoder would accept it.
        const unreduced = { ...jwk, y: pad(y + field[crv], length[crv] + 1) };
        expect(keyWeakness(unreduced)).toBe(
          `its coordinates are not ${length[crv]} bytes each, as ${crv} requires`,
        );
        if (crv === "P-521") {
          // 66 bytes hold values above p = 2^521 - 1.
          expect(keyWeakness({ ...jwk, y: pad(y + field[crv], length[crv]) })).toBe(
            "its coordinates are not reduced modulo the P-521 field prime",
          );
        }
        expect(keyWeakness({ ...jwk, x: (jwk.x as string).slice(2) })).toMatch(/^its coordinates are not/);
      },
    );

    it.each(Object.keys(field) as (keyof typeof field)[])(
      "%s: refuses (0, 0), the identity's encoding",
      (crv) => {
        const zero = pad(0n, length[crv]);
        expect(keyWeakness({ kty: "EC", crv, x: zero, y: zero })).toBe(`its point is not on ${crv}`);
      },
    );

    it("does not judge curves it never uses", () => {
      expect(keyWeakness({ kty: "EC", crv: "secp256k1", x: "AA", y: "AA" })).toBeUndefined();
    });
  });

  describe("Ed25519", () => {
    const p = 2n ** 255n - 19n;
    const encode = (y: bigint, sign = 0) => {
      const bytes = Buffer.from(y.toString(16).padStart(64, "0"), "hex").reverse();
      bytes[31] = (bytes[31] as number) | (sign << 7);
      return { kty: "OKP", crv: "Ed25519", x: bytes.toString("base64url") };
    };
    const power = (b: bigint, e: bigint): bigint =>
      e === 0n ? 1n : ((e & 1n ? b : 1n) * power((b * b) % p, e >> 1n)) % p;

    it("accepts node's keys", () => {
      for (let i = 0; i < 5; i++) expect(keyWeakness(nodeJwk("ed25519"))).toBeUndefined();
    });

    it.each([
      ["the identity (y = 1)", 1n],
      ["the point of order 2 (y = -1)", p - 1n],
      ["a point of order 4 (y = 0)", 0n],
    ])("refuses %s", (_label, y) => {
      expect(keyWeakness(encode(y))).toBe("its point has small order");
    });

    it("refuses non-canonical encodings and points off the curve", () => {
      expect(keyWeakness(encode(p + 1n))).toBe("its point encoding is not canonical");
      expect(keyWeakness(encode(1n, 1))).toBe("its point encoding is not canonical");
      // Euler's criterion, independently of the square root the check computes: the first y with no x.
      const d = (((-121665n * power(121666n, p - 2n)) % p) + p) % p;
      let y = 2n;
      for (; ; y++) {
        const ratio = ((y * y - 1n) * power((d * y * y + 1n) % p, p - 2n)) % p;
        if (power(ratio, (p - 1n) / 2n) === p - 1n) break;
      }
      expect(keyWeakness(encode(y))).toBe("its point is not on Ed25519");
      expect(keyWeakness({ kty: "OKP", crv: "Ed25519", x: "AAAA" })).toBe("its public key is not 32 bytes");
    });
  });

  it("does not judge HMAC secrets (their length rule lives with the secrets)", () => {
    expect(keyWeakness({ kty: "oct", k: "AA" })).toBeUndefined();
  });

  // What happens to a weak key of a JWKS: skipped, with one warning per key.
  // A 2048-bit modulus pattern (not a real key: e = 1 is what is refused).
  const weak = (kid: string): JWK => ({ kty: "RSA", kid, n: `w${"Q".repeat(341)}`, e: "AQ" });

  function filterWithLog() {
    const { logger, warnings } = recordingLogger();
    return { warnings, filter: new WeakKeyFilter(logger) };
  }

  describe("WeakKeyFilter", () => {
    it("warns once per key, also when a refetched JWKS brings the same key as a new object", () => {
      const { warnings, filter } = filterWithLog();
      expect(filter.skip(weak("a"), "JWKS key #1", "remote JWKS")).toBe(true);
      expect(filter.skip({ ...weak("a") }, "JWKS key #1", "remote JWKS")).toBe(true);
      expect(filter.skip(weak("b"), "JWKS key #2", "remote JWKS")).toBe(true);
      expect(warnings).toEqual([
        "jwt-rbac: remote JWKS: JWKS key #1 skipped: its RSA public exponent is below 3",
        "jwt-rbac: remote JWKS: JWKS key #2 skipped: its RSA public exponent is below 3",
      ]);
    });

    it("keeps keys it finds nothing wrong with, silently", () => {
      const { warnings, filter } = filterWithLog();
      expect(filter.skip({ kty: "oct", k: "c2VjcmV0" }, "JWKS key #1", "JWKS")).toBe(false);
      expect(warnings).toEqual([]);
    });
  });

  describe("jwksKeyLabel", () => {
    it("names the position, and the kid quoted and bounded so a log line stays one short line", () => {
      expect(jwksKeyLabel({ kty: "RSA" }, 0)).toBe("JWKS key #1");
      expect(jwksKeyLabel({ kty: "RSA", kid: "k1" }, 2)).toBe('JWKS key #3 (kid "k1")');
      const hostile = jwksKeyLabel({ kty: "RSA", kid: `x\n${"y".repeat(500)}` }, 0);
      expect(hostile).not.toContain("\n");
      expect(hostile.length).toBeLessThan(100);
    });
  });
});

async function refusal(runtime: Runtime, options: JwtRbacOptions): Promise<unknown> {
  return createJwtAuthOn(runtime, { cache: false, ...options }).ready.then(
    () => "accepted",
    (error: unknown) => error,
  );
}

async function outcome(runtime: Runtime, options: JwtRbacOptions, token: string) {
  const auth = createJwtAuthOn(runtime, { cache: false, ...options });
  await auth.ready;
  const result = await auth.authenticate({
    method: "GET",
    path: "/x",
    headers: { authorization: `Bearer ${token}` },
  });
  return result.ok ? { ok: true, userId: result.state.userId } : { ok: false, reason: result.error.reason };
}

/** An RS256 token signed with any RSA key (jose itself will not sign with a 1024-bit one). */
function rs256(key: RsaFixture, sub: string, kid?: string): string {
  const header = kid === undefined ? { alg: "RS256" } : { alg: "RS256", kid };
  return craft(header, JSON.stringify({ sub, exp: NOW_S() + 300 }), rsaSigner(key.privateKey));
}

describe.each(RUNTIMES)("%s", (_name, runtime) => {
  describe("a configured weak key is a configuration error naming the key", () => {
    const cases: [string, () => string, RegExp][] = [
      ["1024-bit PEM SPKI", () => rsa1024.publicPem, /RSA modulus has 1024 bits, fewer than 2048/],
      ["1024-bit X.509 certificate", () => certificate1024, /RSA modulus has 1024 bits, fewer than 2048/],
      ["1024-bit JWK", () => JSON.stringify(rsa1024.publicJwk), /RSA modulus has 1024 bits/],
      ["JWK with e = 1", () => JSON.stringify(withExponent(keys.rs256.publicJwk, 1n)), /exponent is below 3/],
      [
        "JWK with e = 65536",
        () => JSON.stringify(withExponent(keys.rs256.publicJwk, 65536n)),
        /exponent is even/,
      ],
      ["ROCA PEM SPKI", () => roca.publicPem, /ROCA fingerprint/],
    ];
    it.each(cases)("%s", async (_label, key, reason) => {
      const error = await refusal(runtime, {
        algorithms: ["RS256", "PS256"],
        verificationKeys: [keys.rs256.publicPem, key()],
      });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ code: "CONFIG_INVALID", component: "jwt-rbac" });
      expect((error as Error).message).toMatch(/^verification key #2 is refused: /);
      expect((error as Error).message).toMatch(reason);
    });

    it("accepts e = 3 and a 2048-bit certificate (the minimums are not exceeded)", async () => {
      const options = {
        verificationKeys: [keys.certificatePem, JSON.stringify(withExponent(keys.rs256.publicJwk, 3n))],
      };
      expect(await refusal(runtime, options)).toBe("accepted");
    });
  });

  describe("a weak JWKS key is skipped with one warning; the others still verify", () => {
    const jwks = () => ({
      keys: [
        { ...rsa1024.publicJwk, kid: "old" },
        { ...roca.publicJwk, kid: "roca" },
        { ...withExponent(keys.rs256.publicJwk, 1n), kid: "e1" },
        { ...rsa1024.publicJwk, kid: "old" },
        { ...keys.rs256.publicJwk, kid: "good" },
      ],
    });

    function expectWarnings(warnings: string[], source: string) {
      expect(warnings).toEqual([
        `jwt-rbac: ${source}: JWKS key #1 (kid "old") skipped: its RSA modulus has 1024 bits, fewer than 2048`,
        `jwt-rbac: ${source}: JWKS key #2 (kid "roca") skipped: its RSA modulus has the ROCA fingerprint (CVE-2017-15361)`,
        `jwt-rbac: ${source}: JWKS key #3 (kid "e1") skipped: its RSA public exponent is below 3`,
      ]);
      // Never key material: no modulus (nor a part of one) in any log line.
      const modulus = rsa1024.publicJwk.n as string;
      for (const line of warnings) expect(line).not.toContain(modulus.slice(0, 16));
    }

    it("inline JWKS", async () => {
      const { warnings, logger } = recordingLogger();
      const options = { jwks: jwks() as { keys: JWK[] }, logger };
      expect(
        await outcome(
          runtime,
          options,
          await sign({ sub: "g" }, "RS256", keys.rs256.privateKey, { kid: "good" }),
        ),
      ).toEqual({ ok: true, userId: "g" });
      expect(await outcome(runtime, options, rs256(rsa1024, "w", "old"))).toEqual({
        ok: false,
        reason: "unknown_kid",
      });
      expect(await outcome(runtime, options, rs256(roca, "w", "roca"))).toEqual({
        ok: false,
        reason: "unknown_kid",
      });
      expect(await outcome(runtime, options, rs256(rsa1024, "w"))).toEqual({
        ok: false,
        reason: "invalid_signature",
      });
      // Four authenticators were built above: each warned about each weak key once.
      expect(warnings).toHaveLength(12);
      expectWarnings(warnings.slice(0, 3), "JWKS");
    });

    // Files are read by the Node build only (the web build says so: tested in config.test.ts).
    it.skipIf(runtime !== nodeRuntime)("JWKS file", async () => {
      const dir = mkdtempSync(join(tmpdir(), "jwt-rbac-weak-"));
      const jwksFile = join(dir, "jwks.json");
      writeFileSync(jwksFile, JSON.stringify(jwks()));
      const { warnings, logger } = recordingLogger();
      const token = await sign({ sub: "g" }, "RS256", keys.rs256.privateKey, { kid: "good" });
      expect(await outcome(runtime, { jwksFile, logger }, token)).toEqual({ ok: true, userId: "g" });
      expectWarnings(warnings, "JWKS");
    });

    it("remote JWKS: the weak keys never reach jose's key set", async () => {
      jwksServer.answer = { body: jwks() };
      const { warnings, logger } = recordingLogger();
      const auth = createJwtAuthOn(runtime, { cache: false, jwksUrl, logger });
      await auth.ready;
      const ask = async (token: string) => {
        const result = await auth.authenticate({
          method: "GET",
          path: "/x",
          headers: { authorization: `Bearer ${token}` },
        });
        return result.ok
          ? { ok: true, userId: result.state.userId }
          : { ok: false, reason: result.error.reason };
      };
      expect(await ask(await sign({ sub: "g" }, "RS256", keys.rs256.privateKey, { kid: "good" }))).toEqual({
        ok: true,
        userId: "g",
      });
      expect(await ask(rs256(rsa1024, "w", "old"))).toEqual({ ok: false, reason: "unknown_kid" });
      expect(await ask(rs256(roca, "w", "roca"))).toEqual({ ok: false, reason: "unknown_kid" });
      expectWarnings(warnings, `remote JWKS ${jwksUrl}`);
    });
  });

  it("a JWKS of weak keys only is a configuration error", async () => {
    const error = await refusal(runtime, { jwks: { keys: [{ ...rsa1024.publicJwk, kid: "old" }] } });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe("no JWKS key can be used with RS256");
  });
});

/** EMSA-PKCS1-v1_5 of SHA-256(input) for a 2048-bit modulus (RFC 8017 §9.2). */
function pkcs1Encoded(input: string): Uint8Array {
  const digestInfo = Buffer.from("3031300d060960864801650304020105000420", "hex");
  const digest = createHash("sha256").update(input).digest();
  const padding = Buffer.alloc(256 - 3 - digestInfo.length - digest.length, 0xff);
  return Buffer.concat([Buffer.from([0x00, 0x01]), padding, Buffer.from([0x00]), digestInfo, digest]);
}

/** Every weak key class in every presentation, with tokens its private key (or a forger) signs. */
async function weakKeyCases(): Promise<Case[]> {
  const rs2048 = keys.rs256;
  const es = keys.es256;
  const good = rs2048.publicJwk;
  const esToken = (kid?: string) =>
    sign({ sub: "u" }, "ES256", es.privateKey, kid === undefined ? {} : { kid });
  const edToken = (kid?: string) =>
    sign({ sub: "u" }, "EdDSA", keys.eddsa.privateKey, kid === undefined ? {} : { kid });
  const offCurve = { ...es.publicJwk, y: intJwk((jwkInt(es.publicJwk.y as string) + 1n) % 2n ** 256n) };
  const smallOrder: JWK = { kty: "OKP", crv: "Ed25519", x: b64(fixed(1n, 32).reverse()) };
  return Promise.all([
    ...rsaCases(
      "RSA 1024",
      "RS256",
      rsa1024,
      good,
      "its RSA modulus has 1024 bits, fewer than 2048",
      "accept",
    ),
    ...rsaCases(
      "RSA 1024 (PS256)",
      "PS256",
      rsa1024,
      good,
      "its RSA modulus has 1024 bits, fewer than 2048",
      "accept",
    ),
    ...rsaCases(
      "RSA 2048 with the ROCA fingerprint",
      "RS256",
      roca,
      good,
      "its RSA modulus has the ROCA fingerprint (CVE-2017-15361)",
      "accept",
    ),
    ...presentations(
      "RSA 2048 with e = 1",
      "RS256",
      withExponent(rs2048.publicJwk, 1n),
      undefined,
      rs2048.publicJwk,
      "its RSA public exponent is below 3",
      async (kid) => {
        // With e = 1 the "signature" is the padded digest itself: anyone can make one without a private key.
        const header = kid === undefined ? { alg: "RS256" } : { alg: "RS256", kid };
        const forged = craft(header, JSON.stringify({ sub: "u", exp: NOW_S() + 300 }), pkcs1Encoded);
        return [
          {
            name: "signature = EMSA-PKCS1-v1_5 encoding (forgery for e = 1)",
            token: forged,
            expected: "accept",
          },
        ];
      },
    ),
    ...presentations(
      "RSA 2048 with e = 65536",
      "RS256",
      withExponent(rs2048.publicJwk, 65536n),
      undefined,
      rs2048.publicJwk,
      "its RSA public exponent is even",
      async (kid) =>
        commonProbes(
          await sign({ sub: "u" }, "RS256", rs2048.privateKey, kid === undefined ? {} : { kid }),
          "invalid_signature",
        ).slice(0, 1),
    ),
    ...presentations(
      "P-256 point moved off the curve",
      "ES256",
      offCurve,
      undefined,
      keys.es256.publicJwk,
      "its point is not on P-256",
      async (kid) => commonProbes(await esToken(kid), "invalid_signature").slice(0, 1),
    ),
    ...presentations(
      "Ed25519 identity point",
      "EdDSA",
      smallOrder,
      undefined,
      keys.eddsa.publicJwk,
      "its point has small order",
      async (kid) => {
        // With A = identity, R = identity and S = 0 satisfy [S]B = R + [k]A for every message.
        const forged = withSignature(
          await edToken(kid),
          Buffer.concat([fixed(1n, 32).reverse(), Buffer.alloc(32)]),
        );
        return [
          {
            name: "R = identity, S = 0 (verifies for any message under a lax check)",
            token: forged,
            expected: "invalid_signature",
          },
        ];
      },
    ),
  ]);
}

// 17 cases and 94 probes when the weak key classes moved here from the key differential (35 and 242 together).
describeBuildsAgree(
  "both builds decide every weak key class, however configured, identically and as expected",
  weakKeyCases,
  { cases: 17, probes: 94 },
);
