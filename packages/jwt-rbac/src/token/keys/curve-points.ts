import { ed25519 } from "@noble/curves/ed25519.js";
import { p256, p384, p521 } from "@noble/curves/nist.js";
import { bytesToNumberBE } from "@noble/curves/utils.js";

/**
 * Public-key point checks on @noble/curves (audited, runs wherever WebCrypto does), so every runtime refuses
 * the same points whatever its WebCrypto does on import: off-curve NIST points (invalid-curve attacks),
 * non-canonical or small-order Ed25519 points (signatures that verify for many messages).
 */

const NIST_POINTS = { "P-256": p256.Point, "P-384": p384.Point, "P-521": p521.Point } as const;
export type NistCurve = keyof typeof NIST_POINTS;

export function isNistCurve(crv: string): crv is NistCurve {
  return Object.hasOwn(NIST_POINTS, crv);
}

/** Why the coordinates are not a public point of `crv`, or undefined if they are. */
export function nistPointProblem(crv: NistCurve, x: Uint8Array, y: Uint8Array): string | undefined {
  const Point = NIST_POINTS[crv];
  // RFC 7518 §6.2.1.2: a JWK coordinate is always the full field size.
  const bytes = Point.Fp.BYTES;
  if (x.length !== bytes || y.length !== bytes) {
    return `its coordinates are not ${bytes} bytes each, as ${crv} requires`;
  }
  const px = bytesToNumberBE(x);
  const py = bytesToNumberBE(y);
  if (!Point.Fp.isValid(px) || !Point.Fp.isValid(py)) {
    return `its coordinates are not reduced modulo the ${crv} field prime`;
  }
  try {
    // On the curve and not the identity; the cofactor is 1, so that is the prime-order group.
    Point.fromAffine({ x: px, y: py }).assertValidity();
    return undefined;
  } catch {
    return `its point is not on ${crv}`;
  }
}

/** Why the 32-byte encoding is not a usable Ed25519 public key, or undefined if it is one. */
export function ed25519PointProblem(encoded: Uint8Array): string | undefined {
  if (encoded.length !== 32) return "its public key is not 32 bytes";
  let point: ReturnType<typeof ed25519.Point.fromBytes>;
  try {
    point = ed25519.Point.fromBytes(encoded, false); // RFC 8032 §5.1.3 decoding, canonical only
  } catch {
    // ZIP-215 decoding accepts the non-canonical encodings of points RFC 8032 refuses.
    return pointIfLax(encoded) ? "its point encoding is not canonical" : "its point is not on Ed25519";
  }
  return point.isSmallOrder() ? "its point has small order" : undefined;
}

function pointIfLax(encoded: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(encoded, true);
    return true;
  } catch {
    return false;
  }
}

/** Big-endian unsigned integer. */
export const bigEndianInt: (bytes: Uint8Array) => bigint = bytesToNumberBE;
