import type { Channel, OutboundReply } from "../../channel.js";
import { splitIntoNumberedChunks } from "../../chunk.js";
import { DeliveryError } from "../../errors.js";
import { MAX_ANSWER_BYTES } from "../../limits.js";
import { readAnswerText } from "../../raw-body.js";
import { WHATSAPP_ROUTE } from "../routes.js";
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
}

/** WhatsApp through Meta's Cloud API (Graph API). */
export function createWhatsAppChannel(options: WhatsAppChannelOptions): Channel {
  const baseUrl = options.apiBaseUrl.replace(/\/+$/, "");
  return {
    ...WHATSAPP_ROUTE,
    unsupportedReply: "Sorry, that message type is not supported yet.",

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

    async send(reply: OutboundReply) {
      let response: Response;
      try {
        response = await fetch(`${baseUrl}/${encodeURIComponent(reply.accountId)}/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${options.accessToken}`, "content-type": "application/json" },
          body: JSON.stringify({
            messaging_product: "whatsapp",
            recipient_type: "individual",
            to: reply.to,
            type: "text",
            text: { preview_url: false, body: reply.text },
          }),
          signal: AbortSignal.timeout(options.apiTimeoutMs),
        });
      } catch (error) {
        throw new DeliveryError("SEND_FAILED", `Graph API unreachable: ${describe(error)}`, true, {
          cause: error,
        });
      }
      if (response.ok) {
        await response.body?.cancel();
        return;
      }
      const detail = await graphErrorMessage(response);
      // A rate limit is the one client error that a later attempt can get past.
      const retryable = response.status >= 500 || response.status === 429;
      throw new DeliveryError("SEND_FAILED", `Graph API answered ${response.status}: ${detail}`, retryable);
    },

    sessionId(message) {
      return `whatsapp:${message.accountId}:${message.from}`;
    },
  };
}

async function graphErrorMessage(response: Response): Promise<string> {
  const text = await readAnswerText(response, MAX_ANSWER_BYTES).catch(() => "(an answer too large to read)");
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return message.slice(0, 500);
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 500) || response.statusText;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
