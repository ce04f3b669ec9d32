import type { JWK } from "jose";
import { decodeBase64Url } from "../verify/base64url.js";
import {
  bigEndianInt,
  ed25519PointProblem,
  isNistCurve,
  type NistCurve,
  nistPointProblem,
} from "./curve-points.js";
import { hasRocaFingerprint } from "./roca.js";

/** The smallest RSA modulus accepted (NIST SP 800-131A; also what jose's WebCrypto path demands). */
const MIN_RSA_MODULUS_BITS = 2048;

function member(jwk: JWK, name: "n" | "e" | "x" | "y"): Uint8Array | undefined {
  const value = jwk[name];
  return typeof value === "string" ? decodeBase64Url(value) : undefined;
}

function rsaWeakness(jwk: JWK): string | undefined {
  const modulus = member(jwk, "n");
  const exponent = member(jwk, "e");
  if (modulus === undefined || exponent === undefined) {
    return "its modulus or exponent is not base64url";
  }
  const n = bigEndianInt(modulus);
  // Bits of the value, not bytes of the encoding: a zero-padded 1024-bit modulus is still 1024 bits.
  const bits = n === 0n ? 0 : n.toString(2).length;
  if (bits < MIN_RSA_MODULUS_BITS) {
    return `its RSA modulus has ${bits} bits, fewer than ${MIN_RSA_MODULUS_BITS}`;
  }
  const e = bigEndianInt(exponent);
  // e = 1 makes the signature equal the padded hash; an even e is not a valid RSA exponent at all.
  if (e < 3n) return "its RSA public exponent is below 3";
  if (e % 2n === 0n) return "its RSA public exponent is even";
  if (hasRocaFingerprint(n)) return "its RSA modulus has the ROCA fingerprint (CVE-2017-15361)";
  return undefined;
}

function ecWeakness(jwk: JWK, crv: NistCurve): string | undefined {
  const x = member(jwk, "x");
  const y = member(jwk, "y");
  if (x === undefined || y === undefined) return "its coordinates are not base64url";
  return nistPointProblem(crv, x, y);
}

function ed25519Weakness(jwk: JWK): string | undefined {
  const x = member(jwk, "x");
  return x === undefined ? "its public key is not base64url" : ed25519PointProblem(x);
}

/**
 * Why a public JWK must not be used to verify signatures, or `undefined` when nothing is wrong with
 * it. The one rule for every way a key arrives (PEM SPKI and X.509 keys are exported to a JWK first;
 * JWK strings; inline, file and remote JWKS): RSA moduli of at least 2048 bits, odd exponents of at
 * least 3, no ROCA fingerprint; NIST EC points on their curve; canonical Ed25519 points of large order.
 * Keys of other kinds (`oct`, other curves) are not judged here: they are never used for RS*, PS*, ES*
 * or EdDSA. The answer names no key material, so it is safe to log. Cost: BigInt arithmetic of a few
 * milliseconds, meant for key import, not per request.
 */
export function keyWeakness(jwk: JWK): string | undefined {
  if (jwk.kty === "RSA") return rsaWeakness(jwk);
  if (jwk.kty === "EC" && typeof jwk.crv === "string" && isNistCurve(jwk.crv))
    return ecWeakness(jwk, jwk.crv);
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return ed25519Weakness(jwk);
  return undefined;
}
