/**
 * Constant-time comparisons on WebCrypto (`crypto.subtle`), so the same code decides on Node, Bun, Deno
 * and Workers. `crypto.subtle.verify` compares MACs in constant time on each of them, which JavaScript
 * cannot promise for a loop of its own.
 */

const encoder = new TextEncoder();
// Named through the global `crypto`: the DOM lib that declares CryptoKey is not in this package's types.
type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** Imports an HMAC-SHA256 key; an empty secret is refused, since anyone can compute MACs under it. */
function hmacKey(secret: string | Uint8Array): Promise<CryptoKey> {
  const bytes = typeof secret === "string" ? encoder.encode(secret) : secret;
  if (bytes.byteLength === 0) throw new TypeError("An HMAC secret must not be empty");
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

/** Whether `mac` is the HMAC-SHA256 of `data` under `secret`, compared in constant time. */
export async function isHmacSha256(secret: string, data: Uint8Array, mac: Uint8Array): Promise<boolean> {
  return crypto.subtle.verify("HMAC", await hmacKey(secret), mac, data);
}

// A key of this process only: MACs under it stand in for the strings, so comparing them reveals
// neither string's content nor its length.
let comparisonKey: Promise<CryptoKey> | undefined;

/** Constant-time string equality, independent of both lengths. */
export async function secureEquals(given: string, expected: string): Promise<boolean> {
  comparisonKey ??= hmacKey(crypto.getRandomValues(new Uint8Array(32)));
  const key = await comparisonKey;
  const expectedMac = await crypto.subtle.sign("HMAC", key, encoder.encode(expected));
  return crypto.subtle.verify("HMAC", key, expectedMac, encoder.encode(given));
}

/** The bytes of an even-length hex string already checked by the caller's pattern. */
export function hexBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
