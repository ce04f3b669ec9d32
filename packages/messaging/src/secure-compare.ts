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

// Imported once per secret, not per delivery (an import costs as much as the verification). The secrets
// are the channels' configuration, a handful per process; the bound only keeps a misuse from growing it.
const MAX_CACHED_KEYS = 32;
const keysBySecret = new Map<string, Promise<CryptoKey>>();

function cachedHmacKey(secret: string): Promise<CryptoKey> {
  let key = keysBySecret.get(secret);
  if (key === undefined) {
    key = hmacKey(secret);
    if (keysBySecret.size >= MAX_CACHED_KEYS) keysBySecret.clear();
    keysBySecret.set(secret, key);
  }
  return key;
}

/** Whether `mac` is the HMAC-SHA256 of `data` under `secret`, compared in constant time. */
export async function isHmacSha256(secret: string, data: Uint8Array, mac: Uint8Array): Promise<boolean> {
  return crypto.subtle.verify("HMAC", await cachedHmacKey(secret), mac, data);
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
