import { createHmac } from "node:crypto";

/**
 * The header value Meta would send for `rawBody`; for tests and local tooling. It stays on node:crypto
 * (synchronous, Node only): checking a signature is the part that runs everywhere.
 */
export function signatureFor(rawBody: Uint8Array | string, appSecret: string): string {
  return `sha256=${createHmac("sha256", appSecret).update(rawBody).digest("hex")}`;
}
