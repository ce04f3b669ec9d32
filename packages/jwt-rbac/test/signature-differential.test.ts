import { exportJWK, exportSPKI, generateKeyPair } from "jose";
import {
  b64,
  type Case,
  commonProbes,
  describeBuildsAgree,
  fixed,
  type Probe,
  presentations,
  rsaCases,
  signatureOf,
  withSignature,
} from "./fixtures/key-differential.js";
import { sign, testKeys } from "./fixtures/keys.js";
import { jwkInt, type RsaFixture } from "./fixtures/weak-keys.js";

// Usable keys (RSA, P-256, Ed25519) and keys of another curve than the algorithm's, in every way they can be
// configured, against their valid tokens and mutated signatures: both builds decide alike (see
// fixtures/key-differential.ts). The weak key classes are in weak-keys.test.ts.

const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const ED25519_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

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

async function usableKeyCases(): Promise<Case[]> {
  const keys = await testKeys();
  const [e3, p384] = await Promise.all([
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
  ]);
  const e3Pair: RsaFixture = {
    ...e3,
    publicJwk: await exportJWK(e3.publicKey),
    publicPem: await exportSPKI(e3.publicKey),
  };
  const good = keys.rs256.publicJwk;
  const es = keys.es256;
  const ed = keys.eddsa;
  const esToken = (kid?: string) =>
    sign({ sub: "u" }, "ES256", es.privateKey, kid === undefined ? {} : { kid });
  const edToken = (kid?: string) =>
    sign({ sub: "u" }, "EdDSA", ed.privateKey, kid === undefined ? {} : { kid });

  const cases = await Promise.all([
    ...rsaCases("RSA 2048, e = 65537 (RS256)", "RS256", keys.rs256, good, "ready", "accept"),
    ...rsaCases("RSA 2048, e = 65537 (PS256)", "PS256", keys.ps256, good, "ready", "accept"),
    ...rsaCases("RSA 2048, e = 3", "RS256", e3Pair, good, "ready", "accept"),
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
  ]);
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
  return cases;
}

// 18 cases and 148 probes when this file was split from the weak key classes (35 and 242 together).
describeBuildsAgree(
  "both builds decide every usable key and mutated signature identically, and as expected",
  usableKeyCases,
  { cases: 18, probes: 148 },
);
