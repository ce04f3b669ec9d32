import { createHash, KeyObject, sign as nodeSign } from "node:crypto";
import { exportJWK, exportSPKI, generateKeyPair, type JWK } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import type { AuthErrorReason } from "../src/errors.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/signature-types.js";
import { craft } from "./fixtures/hostile-tokens.js";
import { NOW_S, sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import {
  intJwk,
  jwkInt,
  type RsaFixture,
  rocaKeyPair,
  rsaKeyPair,
  withExponent,
} from "./fixtures/weak-keys.js";

/**
 * Differential test of the two builds over generated keys and signatures, in the spirit of Project
 * Wycheproof's RSA, ECDSA, EdDSA, JWK and JWS vectors (no package on the npm registry or in Debian ships
 * those files, so the classes they cover are made here per run): every key, in every way it can be
 * configured, and every token against it, must get the same decision from the node:crypto build and the
 * WebCrypto build, and that decision must be the expected one.
 */

type Expected = "accept" | AuthErrorReason;
interface Probe {
  readonly name: string;
  readonly token: string;
  readonly expected: Expected;
}
interface Case {
  readonly name: string;
  readonly options: JwtRbacOptions;
  /** "ready", or the start of the ConfigError message. */
  readonly construction: string;
  readonly probes: readonly Probe[];
}

const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const ED25519_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const fixed = (value: bigint, bytes: number) =>
  Buffer.from(value.toString(16).padStart(bytes * 2, "0"), "hex");

function withSignature(token: string, signature: Uint8Array): string {
  return `${token.slice(0, token.lastIndexOf("."))}.${b64(signature)}`;
}

const signatureOf = (token: string) => Buffer.from(token.slice(token.lastIndexOf(".") + 1), "base64url");

/** The mutations every signature scheme must refuse; the valid token itself must pass. */
function commonProbes(token: string, validExpected: Expected): Probe[] {
  const signature = signatureOf(token);
  const flipped = Buffer.from(signature);
  flipped[0] = (flipped[0] as number) ^ 0x01;
  const [h, , s] = token.split(".");
  const otherPayload = b64(new TextEncoder().encode(JSON.stringify({ sub: "admin", exp: NOW_S() + 300 })));
  const invalid: Expected = validExpected === "accept" ? "invalid_signature" : validExpected;
  return [
    { name: "valid signature", token, expected: validExpected },
    { name: "one bit flipped", token: withSignature(token, flipped), expected: invalid },
    { name: "last byte dropped", token: withSignature(token, signature.subarray(0, -1)), expected: invalid },
    {
      name: "zero byte appended",
      token: withSignature(token, Buffer.concat([signature, Buffer.alloc(1)])),
      expected: invalid,
    },
    {
      name: "leading zero byte",
      token: withSignature(token, Buffer.concat([Buffer.alloc(1), signature])),
      expected: invalid,
    },
    { name: "all zeros", token: withSignature(token, Buffer.alloc(signature.length)), expected: invalid },
    { name: "empty signature", token: withSignature(token, new Uint8Array()), expected: invalid },
    { name: "other payload", token: `${h}.${otherPayload}.${s}`, expected: invalid },
  ];
}

/** ECDSA P-256 (r || s): malleated and out-of-range scalars. */
function ecdsaProbes(token: string): Probe[] {
  const signature = signatureOf(token);
  const r = jwkInt(b64(signature.subarray(0, 32)));
  const s = jwkInt(b64(signature.subarray(32)));
  const rs = (a: bigint, b: bigint) => withSignature(token, Buffer.concat([fixed(a, 32), fixed(b, 32)]));
  return [
    // ECDSA signatures are malleable; JWS (RFC 7518 §3.4) does not ask for low s, nor do WebCrypto or OpenSSL.
    { name: "s replaced by n - s", token: rs(r, P256_ORDER - s), expected: "accept" },
    { name: "r = 0", token: rs(0n, s), expected: "invalid_signature" },
    { name: "s = 0", token: rs(r, 0n), expected: "invalid_signature" },
    { name: "r + n", token: rs(r + P256_ORDER, s), expected: "invalid_signature" },
    { name: "s + n", token: rs(r, s + P256_ORDER), expected: "invalid_signature" },
    {
      name: "DER-encoded signature",
      token: withSignature(token, derSignature(r, s)),
      expected: "invalid_signature",
    },
  ];
}

function derSignature(r: bigint, s: bigint): Uint8Array {
  const integer = (value: bigint) => {
    let bytes = fixed(value, 32);
    while (bytes.length > 1 && bytes[0] === 0 && ((bytes[1] as number) & 0x80) === 0)
      bytes = bytes.subarray(1);
    if (((bytes[0] as number) & 0x80) !== 0) bytes = Buffer.concat([Buffer.alloc(1), bytes]);
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
  };
  const body = Buffer.concat([integer(r), integer(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/** EMSA-PKCS1-v1_5 of SHA-256(input) for a 2048-bit modulus (RFC 8017 §9.2). */
function pkcs1Encoded(input: string): Uint8Array {
  const digestInfo = Buffer.from("3031300d060960864801650304020105000420", "hex");
  const digest = createHash("sha256").update(input).digest();
  const padding = Buffer.alloc(256 - 3 - digestInfo.length - digest.length, 0xff);
  return Buffer.concat([Buffer.from([0x00, 0x01]), padding, Buffer.from([0x00]), digestInfo, digest]);
}

/** Ed25519 (R || S little-endian): S not reduced modulo L. */
function eddsaProbes(token: string): Probe[] {
  const signature = signatureOf(token);
  const S = jwkInt(b64(Buffer.from(signature.subarray(32)).reverse()));
  const unreduced = Buffer.from(fixed(S + ED25519_ORDER, 32)).reverse();
  return [
    {
      name: "S + L (non-canonical S)",
      token: withSignature(token, Buffer.concat([signature.subarray(0, 32), unreduced])),
      expected: "invalid_signature",
    },
  ];
}

/** RSA: the right key, the wrong padding or hash. */
function rsaProbes(privateKey: CryptoKey, alg: "RS256" | "PS256"): Probe[] {
  const key = KeyObject.from(privateKey);
  const claims = JSON.stringify({ sub: "u", exp: NOW_S() + 300 });
  const pss = (saltLength: number) => ({ key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength });
  const probes: [string, (input: string) => Uint8Array][] =
    alg === "RS256"
      ? [
          ["PKCS#1 v1.5 over SHA-384", (input) => nodeSign("sha384", Buffer.from(input), key)],
          ["PSS instead of PKCS#1 v1.5", (input) => nodeSign("sha256", Buffer.from(input), pss(32))],
        ]
      : [
          ["PSS with salt length 0", (input) => nodeSign("sha256", Buffer.from(input), pss(0))],
          ["PSS with salt length 64", (input) => nodeSign("sha256", Buffer.from(input), pss(64))],
          ["PKCS#1 v1.5 instead of PSS", (input) => nodeSign("sha256", Buffer.from(input), key)],
        ];
  return probes.map(([name, signer]) => ({
    name,
    token: craft({ alg }, claims, signer),
    expected: "invalid_signature" as const,
  }));
}

/** Every way a public key can be configured: a JWK string, PEM SPKI, and a JWKS entry beside a good key. */
function presentations(
  label: string,
  alg: string,
  publicJwk: JWK,
  publicPem: string | undefined,
  good: JWK,
  construction: string,
  probes: (kid: string | undefined) => Promise<Probe[]>,
): Promise<Case>[] {
  const refused = construction !== "ready";
  const unusable = (probe: Probe): Probe => ({
    ...probe,
    expected: refused ? "unknown_kid" : probe.expected,
  });
  return [
    probes(undefined).then((list) => ({
      name: `${label} as a JWK string`,
      options: { algorithm: alg, verificationKeys: [JSON.stringify(publicJwk)] },
      construction: refused ? `verification key #1 is refused: ${construction}` : construction,
      probes: list,
    })),
    ...(publicPem === undefined
      ? []
      : [
          probes(undefined).then((list) => ({
            name: `${label} as PEM SPKI`,
            options: { algorithm: alg, verificationKeys: [publicPem] },
            construction: refused ? `verification key #1 is refused: ${construction}` : construction,
            probes: list,
          })),
        ]),
    probes("k").then((list) => ({
      name: `${label} in a JWKS beside a good key`,
      options: {
        algorithm: alg,
        jwks: {
          keys: [
            { ...publicJwk, kid: "k" },
            { ...good, kid: "good" },
          ],
        },
      },
      construction: "ready",
      probes: list.map(unusable),
    })),
  ];
}

let keys: TestKeys;
let cases: Case[];

async function rsaCases(
  label: string,
  alg: "RS256" | "PS256",
  pair: Omit<RsaFixture, "publicKey">,
  construction: string,
  expected: Expected,
): Promise<Promise<Case>[]> {
  return presentations(
    label,
    alg,
    pair.publicJwk,
    pair.publicPem,
    keys.rs256.publicJwk,
    construction,
    async (kid) => {
      const header = kid === undefined ? { alg } : { alg, kid };
      const token = craft(
        header,
        JSON.stringify({ sub: "u", exp: NOW_S() + 300 }),
        alg === "RS256"
          ? (input) => nodeSign("sha256", Buffer.from(input), KeyObject.from(pair.privateKey))
          : (input) =>
              nodeSign("sha256", Buffer.from(input), {
                key: KeyObject.from(pair.privateKey),
                padding: 6,
                saltLength: 32,
              }),
      );
      const extra = kid === undefined && expected === "accept" ? rsaProbes(pair.privateKey, alg) : [];
      return [...commonProbes(token, expected), ...extra];
    },
  );
}

beforeAll(async () => {
  keys = await testKeys();
  const [rsa1024, roca, e3, p384, ed] = await Promise.all([
    rsaKeyPair(1024),
    rocaKeyPair(),
    crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        hash: "SHA-256",
        modulusLength: 2048,
        publicExponent: new Uint8Array([3]),
      },
      true,
      ["sign", "verify"],
    ),
    generateKeyPair("ES384", { extractable: true }),
    Promise.resolve(keys.eddsa),
  ]);
  const e3Pair: RsaFixture = {
    ...e3,
    publicJwk: await exportJWK(e3.publicKey),
    publicPem: await exportSPKI(e3.publicKey),
  };
  const rs2048 = keys.rs256;
  const ps2048 = keys.ps256;
  const es = keys.es256;
  const esToken = (kid?: string) =>
    sign({ sub: "u" }, "ES256", es.privateKey, kid === undefined ? {} : { kid });
  const edToken = (kid?: string) =>
    sign({ sub: "u" }, "EdDSA", ed.privateKey, kid === undefined ? {} : { kid });
  const offCurve = { ...es.publicJwk, y: intJwk((jwkInt(es.publicJwk.y as string) + 1n) % 2n ** 256n) };
  const smallOrder: JWK = { kty: "OKP", crv: "Ed25519", x: b64(fixed(1n, 32).reverse()) };

  const pending: Promise<Case>[] = [
    ...(await rsaCases("RSA 2048, e = 65537 (RS256)", "RS256", rs2048, "ready", "accept")),
    ...(await rsaCases("RSA 2048, e = 65537 (PS256)", "PS256", ps2048, "ready", "accept")),
    ...(await rsaCases("RSA 2048, e = 3", "RS256", e3Pair, "ready", "accept")),
    ...(await rsaCases(
      "RSA 1024",
      "RS256",
      rsa1024,
      "its RSA modulus has 1024 bits, fewer than 2048",
      "accept",
    )),
    ...(await rsaCases(
      "RSA 1024 (PS256)",
      "PS256",
      rsa1024,
      "its RSA modulus has 1024 bits, fewer than 2048",
      "accept",
    )),
    ...(await rsaCases(
      "RSA 2048 with the ROCA fingerprint",
      "RS256",
      roca,
      "its RSA modulus has the ROCA fingerprint (CVE-2017-15361)",
      "accept",
    )),
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
      "P-256",
      "ES256",
      es.publicJwk,
      es.publicPem,
      keys.es256.publicJwk,
      "ready",
      async (kid) => {
        const token = await esToken(kid);
        return kid === undefined
          ? [...commonProbes(token, "accept"), ...ecdsaProbes(token)]
          : commonProbes(token, "accept");
      },
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
      "Ed25519",
      "EdDSA",
      ed.publicJwk,
      ed.publicPem,
      keys.eddsa.publicJwk,
      "ready",
      async (kid) => {
        const token = await edToken(kid);
        return kid === undefined
          ? [...commonProbes(token, "accept"), ...eddsaProbes(token)]
          : commonProbes(token, "accept");
      },
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
  ];
  cases = await Promise.all(pending);
  // A key of another curve than the algorithm's: not usable, whatever its form.
  const p384Jwk = await exportJWK(p384.publicKey);
  cases.push(
    {
      name: "P-384 JWK string configured for ES256",
      options: { algorithm: "ES256", verificationKeys: [JSON.stringify(p384Jwk)] },
      construction: "verification key #1 cannot be imported for ES256",
      probes: [],
    },
    {
      name: "P-384 PEM configured for ES256",
      options: { algorithm: "ES256", verificationKeys: [await exportSPKI(p384.publicKey)] },
      construction: "verification key #1 cannot be imported for ES256",
      probes: [],
    },
    {
      name: "P-384 JWKS key for ES256",
      options: { algorithm: "ES256", jwks: { keys: [p384Jwk] } },
      construction: "no JWKS key can be used with ES256",
      probes: [],
    },
  );
}, 120_000);

type Decision = { construction: string; decisions: Record<string, Expected> };

async function decide(runtime: Runtime, testCase: Case): Promise<Decision> {
  const auth = createJwtAuthOn(runtime, { cache: false, ...testCase.options });
  const construction = await auth.ready.then(
    () => "ready",
    (error: Error) => error.message,
  );
  const decisions: Record<string, Expected> = {};
  if (construction !== "ready") return { construction, decisions };
  for (const probe of testCase.probes) {
    const result = await auth.authenticate({
      method: "GET",
      path: "/x",
      headers: { authorization: `Bearer ${probe.token}` },
    });
    decisions[probe.name] = result.ok ? "accept" : result.error.reason;
  }
  return { construction, decisions };
}

describe("both builds decide every key and token identically, and as expected", () => {
  it("covers every key class with many probes", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
    expect(cases.flatMap((c) => c.probes).length).toBeGreaterThanOrEqual(150);
  });

  it("every case", async () => {
    const web: Record<string, Decision> = {};
    const node: Record<string, Decision> = {};
    const expected: Record<string, Decision> = {};
    for (const testCase of cases) {
      [web[testCase.name], node[testCase.name]] = await Promise.all([
        decide(webRuntime, testCase),
        decide(nodeRuntime, testCase),
      ]);
      expected[testCase.name] = {
        construction: testCase.construction,
        decisions:
          testCase.construction === "ready"
            ? Object.fromEntries(testCase.probes.map((probe) => [probe.name, probe.expected]))
            : {},
      };
    }
    // Whole maps, so that a failure lists every disagreement at once. Configuration errors are held
    // to the expected message's start (the rest names the algorithms).
    expect(node).toEqual(web);
    const webAsExpected = Object.fromEntries(
      Object.entries(web).map(([name, decision]) => [
        name,
        { ...decision, construction: decision.construction.slice(0, expected[name]?.construction.length) },
      ]),
    );
    expect(webAsExpected).toEqual(expected);
  });
});
