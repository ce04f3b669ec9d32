import { createHmac, timingSafeEqual } from "node:crypto";

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Meta signs every webhook delivery with `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the raw
 * body under the app secret. Missing, malformed and wrong signatures are all just "not authentic".
 */
export function isValidSignature(header: string | null, rawBody: Uint8Array, appSecret: string): boolean {
  const match = header === null ? null : SIGNATURE.exec(header.trim());
  if (!match?.[1]) return false;
  const expected = createHmac("sha256", appSecret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1], "hex"));
}

/** The header value Meta would send for `rawBody`; used by tests and local tooling. */
export function signatureFor(rawBody: Uint8Array | string, appSecret: string): string {
  return `sha256=${createHmac("sha256", appSecret).update(rawBody).digest("hex")}`;
}
