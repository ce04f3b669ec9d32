import type { Channel } from "../../channel.js";
import { DEFAULT_API_TIMEOUT_MS, OptionChecks, optionsObject } from "../../options.js";
import { checkPacing, type PacingOptions, WHATSAPP_PACING } from "../../pacing.js";
import { createWhatsAppChannel } from "./channel.js";

/** Options of `whatsapp()`. */
export interface WhatsAppOptions {
  /** Token Meta sends in the subscription handshake; without it the handshake answers 500. */
  verifyToken?: string | undefined;
  /** App secret for the `X-Hub-Signature-256` HMAC of each delivery. */
  appSecret?: string | undefined;
  /** Accept unsigned deliveries when no app secret is given. For local development only. */
  skipSignatureValidation?: boolean;
  /** Bearer token for replies through the Graph API. */
  accessToken: string;
  /** The sending number, when a delivery does not name the receiving one. */
  phoneNumberId: string;
  /** Default `https://graph.facebook.com/v25.0`. */
  apiBaseUrl?: string;
  /** Default 10,000. */
  apiTimeoutMs?: number;
  /** How fast replies go out; defaults: the chat product's documented limits (`WHATSAPP_PACING`). */
  pacing?: PacingOptions;
}

const WHATSAPP_DEFAULT_API_BASE_URL = "https://graph.facebook.com/v25.0";

const OPTIONS = [
  "verifyToken",
  "appSecret",
  "skipSignatureValidation",
  "accessToken",
  "phoneNumberId",
  "apiBaseUrl",
  "apiTimeoutMs",
  "pacing",
] as const;

/**
 * WhatsApp through Meta's Cloud API. Throws a ConfigError naming each option it cannot work with. Without
 * an app secret (`skipSignatureValidation: true`) the channel is unauthenticated, which `createMessaging`
 * refuses in production.
 */
export function whatsapp(options: WhatsAppOptions): Channel {
  const checks = new OptionChecks("whatsapp");
  const given = optionsObject(checks, "options", options);
  checks.knownKeys("", given, OPTIONS);
  const accessToken = checks.text("accessToken", given.accessToken, true);
  const phoneNumberId = checks.text("phoneNumberId", given.phoneNumberId, true);
  const appSecret = checks.text("appSecret", given.appSecret, false);
  const verifyToken = checks.text("verifyToken", given.verifyToken, false);
  const skip = checks.boolean("skipSignatureValidation", given.skipSignatureValidation);
  if (appSecret === undefined && !skip) {
    checks.problem("appSecret", "is required (or skipSignatureValidation: true, outside production)");
  }
  const apiBaseUrl = checks.url("apiBaseUrl", given.apiBaseUrl, WHATSAPP_DEFAULT_API_BASE_URL);
  const apiTimeoutMs = checks.integer("apiTimeoutMs", given.apiTimeoutMs, DEFAULT_API_TIMEOUT_MS, 1);
  const pacing = checkPacing(checks, given.pacing, WHATSAPP_PACING);
  checks.done();
  return createWhatsAppChannel({
    verifyToken,
    appSecret,
    accessToken: accessToken as string,
    phoneNumberId: phoneNumberId as string,
    apiBaseUrl,
    apiTimeoutMs,
    pacing,
  });
}
