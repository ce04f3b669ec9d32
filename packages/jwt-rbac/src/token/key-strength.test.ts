import { generateKeyPairSync } from "node:crypto";
import type { JWK } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { recordingLogger } from "../../../common/test/recording-logger.js";
import {
  intJwk,
  jwkInt,
  type RsaFixture,
  rocaKeyPair,
  rsaKeyPair,
  withExponent,
} from "../../test/fixtures/weak-keys.js";
import { keyWeakness } from "./key-strength.js";
import { hasRocaFingerprint } from "./roca.js";
import { jwksKeyLabel, WeakKeyFilter } from "./weak-keys.js";

let rsa2048: RsaFixture;
let rsa1024: RsaFixture;
let roca: RsaFixture;

beforeAll(async () => {
  [rsa2048, rsa1024, roca] = await Promise.all([rsaKeyPair(2048), rsaKeyPair(1024), rocaKeyPair()]);
});

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
      n: Buffer.concat([Buffer.alloc(128), Buffer.from(rsa1024.publicJwk.n as string, "base64url")]).toString(
        "base64url",
      ),
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
