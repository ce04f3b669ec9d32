import { createHmac } from "node:crypto";

/**
 * The signatures the chat platforms put on their webhooks, for tests and the bench to send deliveries as the
 * platform would. Written from the platforms' documentation, apart from the checks in messaging they test.
 */

/** Meta's `X-Hub-Signature-256` header value: `sha256=` and the hex HMAC-SHA256 of the raw body. */
export function whatsAppSignature(rawBody: Uint8Array | string, appSecret: string): string {
  return `sha256=${createHmac("sha256", appSecret).update(rawBody).digest("hex")}`;
}

/** Slack's two headers for `rawBody` at `timestampSeconds`: `v0=` and the hex HMAC of `v0:<ts>:<body>`. */
export function slackSignatureHeaders(
  rawBody: string | Uint8Array,
  signingSecret: string,
  timestampSeconds = Math.floor(Date.now() / 1000),
): { "x-slack-request-timestamp": string; "x-slack-signature": string } {
  const hmac = createHmac("sha256", signingSecret).update(`v0:${timestampSeconds}:`).update(rawBody);
  return {
    "x-slack-request-timestamp": String(timestampSeconds),
    "x-slack-signature": `v0=${hmac.digest("hex")}`,
  };
}
