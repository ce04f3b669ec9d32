import type { CallOptions, Channel, OutboundReply } from "../../channel.js";
import { splitIntoNumberedChunks } from "../../chunk.js";
import { DeliveryError } from "../../errors.js";
import type { SendPacing } from "../../pacing.js";
import { TELEGRAM_ROUTE } from "../routes.js";
import { MAX_RETRY_AFTER_MS, postJson } from "../send.js";
import { parseTelegramUpdate } from "./parse.js";
import { isValidTelegramSecretToken } from "./secret-token.js";

/** `sendMessage` refuses texts longer than this. */
export const TELEGRAM_TEXT_LIMIT = 4096;

export interface TelegramChannelOptions {
  botToken: string;
  /** Undefined: every request is accepted (the caller decided that is allowed). */
  secretToken: string | undefined;
  apiBaseUrl: string;
  apiTimeoutMs: number;
  /** Undefined: not paced. */
  pacing?: SendPacing | undefined;
}

/** Telegram through the Bot API: webhook updates in, `sendMessage` out. */
export function createTelegramChannel(options: TelegramChannelOptions): Channel {
  const baseUrl = options.apiBaseUrl.replace(/\/+$/, "");
  // The bot's id is the token's first part; it keys updates and sessions, and is not a secret.
  const botId = options.botToken.split(":")[0] ?? "";
  return {
    ...TELEGRAM_ROUTE,
    unsupportedReply: "Sorry, that message type is not supported yet.",
    sendTimeoutMs: options.apiTimeoutMs,
    pacing: options.pacing,
    unauthenticated: options.secretToken === undefined ? "allowUnauthenticated: true" : undefined,

    authenticate(headers) {
      if (options.secretToken === undefined) return Promise.resolve(true);
      return isValidTelegramSecretToken(headers, options.secretToken);
    },

    parseDelivery(body) {
      return parseTelegramUpdate(body, botId);
    },

    splitReply(text) {
      return splitIntoNumberedChunks(text, TELEGRAM_TEXT_LIMIT);
    },

    async send(reply: OutboundReply, call?: CallOptions) {
      // The URL carries the token: postJson never puts it in an error, and neither does this.
      const answer = await postJson("Telegram Bot API", `${baseUrl}/bot${options.botToken}/sendMessage`, {
        body: { chat_id: reply.to, text: reply.text },
        timeoutMs: options.apiTimeoutMs,
        signal: call?.signal,
      });
      const body = (answer.json ?? {}) as {
        ok?: unknown;
        description?: unknown;
        parameters?: { retry_after?: unknown };
      };
      if (answer.status === 200 && body.ok === true) return;
      const description =
        typeof body.description === "string" ? body.description.slice(0, 200) : `HTTP ${answer.status}`;
      const retryAfter = body.parameters?.retry_after;
      const retryAfterMs =
        typeof retryAfter === "number" && Number.isFinite(retryAfter) && retryAfter >= 0
          ? Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS)
          : answer.retryAfterMs;
      // 400 (chat not found) and 403 (bot blocked) will not change on a retry; rate limits and outages will.
      const retryable = answer.status === 429 || answer.status >= 500;
      throw new DeliveryError(
        "SEND_FAILED",
        `Telegram Bot API answered ${answer.status}: ${description}`,
        retryable,
        { retryAfterMs },
      );
    },

    sessionId(message) {
      return `telegram:${message.accountId}:${message.conversation ?? message.from}`;
    },
  };
}
