import type { CallOptions, Channel, OutboundReply } from "../../channel.js";
import { splitIntoNumberedChunks } from "../../chunk.js";
import { DeliveryError } from "../../errors.js";
import type { SendPacing } from "../../pacing.js";
import { WHATSAPP_ROUTE } from "../routes.js";
import { postJson } from "../send.js";
import { verifyWhatsAppHandshake } from "./handshake.js";
import { parseWhatsAppDelivery } from "./parse.js";
import { isValidWhatsAppSignature } from "./signature.js";

/** The Cloud API rejects text messages longer than this. */
export const WHATSAPP_TEXT_LIMIT = 4096;

export interface WhatsAppChannelOptions {
  verifyToken: string | undefined;
  /** Undefined only when signature validation is explicitly (and allowedly) skipped. */
  appSecret: string | undefined;
  accessToken: string;
  phoneNumberId: string;
  apiBaseUrl: string;
  apiTimeoutMs: number;
  /** Undefined: not paced. */
  pacing?: SendPacing | undefined;
}

/** A phone number as WhatsApp writes one in `from` and `wa_id`: digits only, no `+`. */
const PHONE_NUMBER = /^[0-9]+$/;

/**
 * Where a reply goes: `to` for a phone number, `recipient` for anything else, which is a business-scoped
 * user id (`CC.` and letters and digits): the sender of a user who set a username and hid their number.
 */
function addressOf(sender: string): { to: string } | { recipient: string } {
  return PHONE_NUMBER.test(sender) ? { to: sender } : { recipient: sender };
}

/** WhatsApp through Meta's Cloud API (Graph API). */
export function createWhatsAppChannel(options: WhatsAppChannelOptions): Channel {
  const baseUrl = options.apiBaseUrl.replace(/\/+$/, "");
  return {
    ...WHATSAPP_ROUTE,
    unsupportedReply: "Sorry, that message type is not supported yet.",
    sendTimeoutMs: options.apiTimeoutMs,
    pacing: options.pacing,
    unauthenticated: options.appSecret === undefined ? "skipSignatureValidation: true" : undefined,

    verifyHandshake(query) {
      return verifyWhatsAppHandshake(query, options.verifyToken);
    },

    authenticate(headers, rawBody) {
      if (options.appSecret === undefined) return Promise.resolve(true);
      return isValidWhatsAppSignature(headers.get("x-hub-signature-256"), rawBody, options.appSecret);
    },

    parseDelivery(body) {
      return parseWhatsAppDelivery(body, options.phoneNumberId);
    },

    splitReply(text) {
      return splitIntoNumberedChunks(text, WHATSAPP_TEXT_LIMIT);
    },

    async send(reply: OutboundReply, call?: CallOptions) {
      const answer = await postJson(
        "Graph API",
        `${baseUrl}/${encodeURIComponent(reply.accountId)}/messages`,
        {
          headers: { authorization: `Bearer ${options.accessToken}` },
          body: {
            messaging_product: "whatsapp",
            recipient_type: "individual",
            ...addressOf(reply.to),
            type: "text",
            text: { preview_url: false, body: reply.text },
          },
          timeoutMs: options.apiTimeoutMs,
          signal: call?.signal,
        },
      );
      if (answer.status >= 200 && answer.status < 300) return;
      const message = (answer.json as { error?: { message?: unknown } } | undefined)?.error?.message;
      const detail =
        typeof message === "string"
          ? message.slice(0, 500)
          : answer.text.slice(0, 500) || `HTTP ${answer.status}`;
      // A rate limit is the one client error that a later attempt can get past.
      const retryable = answer.status >= 500 || answer.status === 429;
      throw new DeliveryError("SEND_FAILED", `Graph API answered ${answer.status}: ${detail}`, retryable, {
        retryAfterMs: answer.retryAfterMs,
      });
    },

    sessionId(message) {
      return `whatsapp:${message.accountId}:${message.from}`;
    },
  };
}
