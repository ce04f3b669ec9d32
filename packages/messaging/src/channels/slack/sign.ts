import { createHmac } from "node:crypto";
import { slackSignedPrefix } from "./signature.js";

/**
 * The headers Slack would send for `rawBody` at `timestampSeconds`; for tests and local tooling. It stays
 * on node:crypto (synchronous, Node only): checking a signature is the part that runs everywhere.
 */
export function slackSignatureHeaders(
  rawBody: string | Uint8Array,
  signingSecret: string,
  timestampSeconds = Math.floor(Date.now() / 1000),
): { "x-slack-request-timestamp": string; "x-slack-signature": string } {
  const hmac = createHmac("sha256", signingSecret)
    .update(slackSignedPrefix(timestampSeconds))
    .update(rawBody);
  return {
    "x-slack-request-timestamp": String(timestampSeconds),
    "x-slack-signature": `v0=${hmac.digest("hex")}`,
  };
}
