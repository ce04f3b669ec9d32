import { hexBytes } from "../../hex.js";
import { isHmacSha256 } from "../../secure-compare.js";

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Meta signs every webhook delivery with `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the raw
 * body under the app secret. Missing, malformed and wrong signatures are all just "not authentic".
 */
export async function isValidWhatsAppSignature(
  header: string | null,
  rawBody: Uint8Array,
  appSecret: string,
): Promise<boolean> {
  const match = header === null ? null : SIGNATURE.exec(header.trim());
  if (!match?.[1]) return false;
  return isHmacSha256(appSecret, rawBody, hexBytes(match[1]));
}
