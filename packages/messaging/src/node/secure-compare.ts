import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The Node build's constant-time comparisons: the same decisions as `../secure-compare.ts` (WebCrypto, for
 * Workers, Deno, Bun and browsers) on node:crypto, where a one-shot HMAC costs a fraction of WebCrypto's
 * asynchronous import and verify (bench/notes/profiles.md, "Why the code is as it is"). The build swaps this file in for the
 * WebCrypto one (tsup.config.ts); `secure-compare.test.ts` holds the two to identical answers.
 */

function hmac(secret: string | Uint8Array, data: Uint8Array | string): Buffer {
  if ((typeof secret === "string" ? Buffer.byteLength(secret) : secret.byteLength) === 0) {
    throw new TypeError("An HMAC secret must not be empty");
  }
  return createHmac("sha256", secret).update(data).digest();
}

/** Whether `mac` is the HMAC-SHA256 of `data` under `secret`, compared in constant time. */
export async function isHmacSha256(secret: string, data: Uint8Array, mac: Uint8Array): Promise<boolean> {
  const expected = hmac(secret, data);
  // The length of a MAC is public (always 32 for SHA-256); only its content is compared in constant time.
  return mac.byteLength === expected.byteLength && timingSafeEqual(expected, mac);
}

// A key of this process only: MACs under it stand in for the strings, so comparing them reveals
// neither string's content nor its length.
const comparisonKey = randomBytes(32);

/** Constant-time string equality, independent of both lengths. */
export async function secureEquals(given: string, expected: string): Promise<boolean> {
  return timingSafeEqual(hmac(comparisonKey, given), hmac(comparisonKey, expected));
}
