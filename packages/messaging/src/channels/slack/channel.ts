import type { CallOptions, Channel, OutboundReply } from "../../channel.js";
import { splitIntoNumberedChunks } from "../../chunk.js";
import { DeliveryError } from "../../errors.js";
import type { SendPacing } from "../../pacing.js";
import { SLACK_ROUTE } from "../routes.js";
import { postJson } from "../send.js";
import { parseSlackDelivery } from "./parse.js";
import { isValidSlackSignature } from "./signature.js";

/**
 * Slack truncates a message past 40,000 characters and advises staying under 4,000 for readability; a
 * reply is split into parts of at most this many, at paragraph, line or space boundaries.
 */
export const SLACK_TEXT_LIMIT = 4_000;

export interface SlackChannelOptions {
  signingSecret: string;
  botToken: string;
  apiBaseUrl: string;
  apiTimeoutMs: number;
  /** Undefined: not paced. */
  pacing?: SendPacing | undefined;
  now: () => number;
}

/** Slack through the Events API (in) and `chat.postMessage` of the Web API (out). */
export function createSlackChannel(options: SlackChannelOptions): Channel {
  const baseUrl = options.apiBaseUrl.replace(/\/+$/, "");
  return {
    ...SLACK_ROUTE,
    unsupportedReply: "Sorry, that message type is not supported yet.",
    sendTimeoutMs: options.apiTimeoutMs,
    pacing: options.pacing,

    authenticate(headers, rawBody) {
      return isValidSlackSignature(headers, rawBody, options.signingSecret, options.now());
    },

    parseDelivery: parseSlackDelivery,

    splitReply(text) {
      return splitIntoNumberedChunks(text, SLACK_TEXT_LIMIT);
    },

    async send(reply: OutboundReply, call?: CallOptions) {
      const answer = await postJson("Slack API", `${baseUrl}/chat.postMessage`, {
        headers: { authorization: `Bearer ${options.botToken}` },
        body: {
          channel: reply.to,
          text: reply.text,
          ...(reply.thread === undefined ? {} : { thread_ts: reply.thread }),
        },
        timeoutMs: options.apiTimeoutMs,
        signal: call?.signal,
      });
      const body = (answer.json ?? {}) as { ok?: unknown; error?: unknown };
      if (answer.status === 200 && body.ok === true) return;
      const error = typeof body.error === "string" ? body.error.slice(0, 200) : answer.text.slice(0, 200);
      // Slack answers most errors with HTTP 200 and ok: false; only rate limits and its own outages pass.
      const retryable = answer.status === 429 || answer.status >= 500 || error === "ratelimited";
      throw new DeliveryError("SEND_FAILED", `Slack API answered ${answer.status}: ${error}`, retryable, {
        retryAfterMs: answer.retryAfterMs,
      });
    },

    sessionId(message) {
      const base = `slack:${message.accountId}:${message.conversation ?? message.from}`;
      return message.thread === undefined ? base : `${base}:${message.thread}`;
    },
  };
}
