import { configError } from "@agent-platform/common/internal";
import type { Channel } from "../../channel.js";
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
}

const WHATSAPP_DEFAULT_API_BASE_URL = "https://graph.facebook.com/v25.0";

/** WhatsApp through Meta's Cloud API. Throws a ConfigError for options it cannot work with. */
export function whatsapp(options: WhatsAppOptions): Channel {
  const problems: string[] = [];
  if (!options.accessToken) problems.push("accessToken is required");
  if (!options.phoneNumberId) problems.push("phoneNumberId is required");
  if (!options.appSecret && options.skipSignatureValidation !== true) {
    problems.push("appSecret is required (or skipSignatureValidation: true, for local development)");
  }
  if (problems.length > 0)
    throw configError("messaging", `whatsapp: ${problems.join("; ")}`, undefined, problems);
  return createWhatsAppChannel({
    verifyToken: options.verifyToken || undefined,
    appSecret: options.appSecret || undefined,
    accessToken: options.accessToken,
    phoneNumberId: options.phoneNumberId,
    apiBaseUrl: options.apiBaseUrl ?? WHATSAPP_DEFAULT_API_BASE_URL,
    apiTimeoutMs: options.apiTimeoutMs ?? 10_000,
  });
}
