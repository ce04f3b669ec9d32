/**
 * Public-key point checks in plain BigInt, so every runtime refuses the same points whatever its
 * WebCrypto does on import: off-curve NIST points (invalid-curve attacks), non-canonical or
 * small-order Ed25519 points (signatures that verify for many messages).
 */

function mod(a: bigint, m: bigint): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

function power(base: bigint, exponent: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
  }
  return result;
}

/** Big-endian unsigned integer. */
export function bigEndianInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

interface WeierstrassCurve {
  /** Coordinate length in a JWK (RFC 7518 §6.2.1.2: always the full field size). */
  readonly bytes: number;
  readonly p: bigint;
  readonly b: bigint;
}

/** y² = x³ − 3x + b over GF(p); cofactor 1, so every point on the curve is in the prime-order group. */
const NIST_CURVES: Readonly<Record<string, WeierstrassCurve>> = {
  "P-256": {
    bytes: 32,
    p: 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n,
    b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
  },
  "P-384": {
    bytes: 48,
    p: 2n ** 384n - 2n ** 128n - 2n ** 96n + 2n ** 32n - 1n,
    b: 0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aefn,
  },
  "P-521": {
    bytes: 66,
    p: 2n ** 521n - 1n,
    b: 0x0051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00n,
  },
};

export function isNistCurve(crv: string): boolean {
  return Object.hasOwn(NIST_CURVES, crv);
}

/** Why the coordinates are not a public point of `crv` (a NIST curve), or undefined if they are. */
export function nistPointProblem(crv: string, x: Uint8Array, y: Uint8Array): string | undefined {
  const curve = NIST_CURVES[crv] as WeierstrassCurve;
  if (x.length !== curve.bytes || y.length !== curve.bytes) {
    return `its coordinates are not ${curve.bytes} bytes each, as ${crv} requires`;
  }
  const { p, b } = curve;
  const px = bigEndianInt(x);
  const py = bigEndianInt(y);
  if (px >= p || py >= p) return `its coordinates are not reduced modulo the ${crv} field prime`;
  if (mod(py * py - (px * px * px - 3n * px + b), p) !== 0n) return `its point is not on ${crv}`;
  return undefined;
}

const ED_P = 2n ** 255n - 19n;
const ED_D = mod(-121665n * power(121666n, ED_P - 2n, ED_P), ED_P);
const SQRT_MINUS_1 = power(2n, (ED_P - 1n) / 4n, ED_P);

/** x with x² ≡ u/v (mod p) for the Ed25519 field, or undefined when there is none (RFC 8032 §5.1.3). */
function edwardsX(y: bigint): bigint | undefined {
  const u = mod(y * y - 1n, ED_P);
  const v = mod(ED_D * y * y + 1n, ED_P);
  const x2 = (u * power(v, ED_P - 2n, ED_P)) % ED_P;
  let x = power(x2, (ED_P + 3n) / 8n, ED_P);
  if ((x * x) % ED_P !== x2) x = (x * SQRT_MINUS_1) % ED_P;
  return (x * x) % ED_P === x2 ? x : undefined;
}

/** [8]P == O: P has order 1, 2, 4 or 8. Doubling in projective coordinates (dbl-2008-hwcd, a = −1). */
function hasSmallOrder(x: bigint, y: bigint): boolean {
  let [X, Y, Z] = [x, y, 1n];
  for (let i = 0; i < 3; i++) {
    const A = (X * X) % ED_P;
    const B = (Y * Y) % ED_P;
    const C = (2n * Z * Z) % ED_P;
    const E = mod((X + Y) * (X + Y) - A - B, ED_P);
    const G = mod(B - A, ED_P);
    const F = mod(G - C, ED_P);
    const H = mod(-A - B, ED_P);
    [X, Y, Z] = [(E * F) % ED_P, (G * H) % ED_P, (F * G) % ED_P];
  }
  return X === 0n && Y === Z;
}

/** Why the 32-byte encoding is not a usable Ed25519 public key, or undefined if it is one. */
export function ed25519PointProblem(encoded: Uint8Array): string | undefined {
  if (encoded.length !== 32) return "its public key is not 32 bytes";
  const littleEndian = Uint8Array.from(encoded).reverse();
  const signBit = (littleEndian[0] as number) >> 7;
  littleEndian[0] = (littleEndian[0] as number) & 0x7f;
  const y = bigEndianInt(littleEndian);
  if (y >= ED_P) return "its point encoding is not canonical";
  const x = edwardsX(y);
  if (x === undefined) return "its point is not on Ed25519";
  if (x === 0n && signBit === 1) return "its point encoding is not canonical";
  if (hasSmallOrder(x, y)) return "its point has small order";
  return undefined;
}
