import { createHmac, timingSafeEqual } from "node:crypto";

/** Slack refuses to accept, and so do we, a request signed more than this far from now (replays). */
export const SLACK_MAX_CLOCK_SKEW_SECONDS = 5 * 60;

const SIGNATURE = /^v0=([0-9a-f]{64})$/;
const TIMESTAMP = /^\d{1,12}$/;

/**
 * Slack signs each request with `X-Slack-Signature: v0=<hex>`, the HMAC-SHA256 of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}` under the signing secret. Missing, malformed, stale and wrong
 * are all "not authentic".
 */
export function isValidSlackSignature(
  headers: Headers,
  rawBody: Uint8Array,
  signingSecret: string,
  nowMs: number,
): boolean {
  const timestamp = headers.get("x-slack-request-timestamp")?.trim() ?? "";
  const match = SIGNATURE.exec(headers.get("x-slack-signature")?.trim() ?? "");
  if (!match?.[1] || !TIMESTAMP.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_MAX_CLOCK_SKEW_SECONDS) return false;
  const expected = createHmac("sha256", signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1], "hex"));
}

/** The headers Slack would send for `rawBody` at `timestampSeconds`; for tests and local tooling. */
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
