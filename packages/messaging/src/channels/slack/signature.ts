import type { HeaderReader } from "../../channel.js";
import { hexBytes } from "../../hex.js";
import { isHmacSha256 } from "../../secure-compare.js";

/** Slack refuses to accept, and so do we, a request signed more than this far from now (replays). */
export const SLACK_MAX_CLOCK_SKEW_SECONDS = 5 * 60;

const SIGNATURE = /^v0=([0-9a-f]{64})$/;
const TIMESTAMP = /^\d{1,12}$/;

/** What Slack's v0 signature covers ahead of the raw body. */
export function slackSignedPrefix(timestamp: string | number): string {
  return `v0:${timestamp}:`;
}

/**
 * Slack signs each request with `X-Slack-Signature: v0=<hex>`, the HMAC-SHA256 of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}` under the signing secret. Missing, malformed, stale and wrong
 * are all "not authentic".
 */
export async function isValidSlackSignature(
  headers: HeaderReader,
  rawBody: Uint8Array,
  signingSecret: string,
  nowMs: number,
): Promise<boolean> {
  const timestamp = headers.get("x-slack-request-timestamp")?.trim() ?? "";
  const match = SIGNATURE.exec(headers.get("x-slack-signature")?.trim() ?? "");
  if (!match?.[1] || !TIMESTAMP.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_MAX_CLOCK_SKEW_SECONDS) return false;
  const prefix = new TextEncoder().encode(slackSignedPrefix(timestamp));
  const signed = new Uint8Array(prefix.byteLength + rawBody.byteLength);
  signed.set(prefix);
  signed.set(rawBody, prefix.byteLength);
  return isHmacSha256(signingSecret, signed, hexBytes(match[1]));
}
