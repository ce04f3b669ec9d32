import { type OptionChecks, optionsObject } from "./options.js";

/**
 * How fast a channel sends: at most one message per `perChatMs` to one chat (a WhatsApp user, a Slack channel, a
 * Telegram chat) and `perAccountPerSecond` messages in any second from one sending account (a WhatsApp phone
 * number id, a Slack team, a Telegram bot). `0` turns either limit off. Each channel's defaults are the limits
 * its chat product documents (see the package README).
 */
export interface PacingOptions {
  /** The least time between two messages to one chat, in milliseconds, measured from the end of a send. */
  perChatMs?: number;
  /** The most messages one sending account sends in any second. */
  perAccountPerSecond?: number;
}

/** A channel's pacing, every field set. */
export type SendPacing = Required<PacingOptions>;

/** Telegram: "avoid sending more than one message per second in a particular chat", about 30 a second in all. */
export const TELEGRAM_PACING: SendPacing = { perChatMs: 1_000, perAccountPerSecond: 30 };
/** Slack `chat.postMessage`: 1 message per second per channel; no per-workspace number is published. */
export const SLACK_PACING: SendPacing = { perChatMs: 1_000, perAccountPerSecond: 0 };
/** WhatsApp Cloud API: the pair rate (1 message every 6 s to one user) and the default throughput (80 a second). */
export const WHATSAPP_PACING: SendPacing = { perChatMs: 6_000, perAccountPerSecond: 80 };

const PACING_OPTIONS = ["perChatMs", "perAccountPerSecond"] as const;

/** A factory's `pacing` option checked against `defaults`; problems name `pacing.<field>`. */
export function checkPacing(checks: OptionChecks, value: unknown, defaults: SendPacing): SendPacing {
  const given = optionsObject(checks, "pacing", value);
  checks.knownKeys("pacing.", given, PACING_OPTIONS);
  return {
    // Up to an hour between two messages of one chat, up to 10,000 a second per account (WhatsApp's highest tier
    // is 1,000): past either, the value is a typo rather than a pace.
    perChatMs: checks.integer("pacing.perChatMs", given.perChatMs, defaults.perChatMs, 0, 3_600_000),
    perAccountPerSecond: checks.integer(
      "pacing.perAccountPerSecond",
      given.perAccountPerSecond,
      defaults.perAccountPerSecond,
      0,
      10_000,
    ),
  };
}
