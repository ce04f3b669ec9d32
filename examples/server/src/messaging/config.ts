import { SLACK_PACING, TELEGRAM_PACING, WHATSAPP_PACING } from "@agent-platform/messaging";
import { z } from "zod";
import { envBoolean, envEnum, envInteger, envText, envUrl } from "../env-vars.js";

const milliseconds = (fallback: number) => envInteger(fallback, { min: 0, max: 86_400_000 });
// A call's timeout: 0 would abort every call at once (the package refuses it too, naming the option).
// A channel's pacing (see the package): the least gap between two sends to one chat, and the most sends a second
// of one account; 0 turns either off.
const perChatMs = (fallback: number) => envInteger(fallback, { min: 0, max: 3_600_000 });
const perSecond = (fallback: number) => envInteger(fallback, { min: 0, max: 10_000 });
const timeoutMs = (fallback: number) => envInteger(fallback, { min: 1, max: 86_400_000 });

/**
 * Environment variables of the messaging channels, read with the server's one env parser (`../env-vars.ts`).
 * Every variable is optional: a channel without its credentials is simply not mounted. The
 * server merges this object into its env schema.
 */
export const messagingConfigSchema = z.object({
  WHATSAPP_VERIFY_TOKEN: envText,
  WHATSAPP_APP_SECRET: envText,
  WHATSAPP_ACCESS_TOKEN: envText,
  WHATSAPP_PHONE_NUMBER_ID: envText,
  WHATSAPP_API_BASE_URL: envUrl().transform((value) => value ?? "https://graph.facebook.com/v25.0"),
  WHATSAPP_SKIP_SIGNATURE_VALIDATION: envBoolean(false),
  WHATSAPP_API_TIMEOUT_MS: timeoutMs(10_000),
  WHATSAPP_PACING_PER_CHAT_MS: perChatMs(WHATSAPP_PACING.perChatMs),
  WHATSAPP_PACING_PER_SECOND: perSecond(WHATSAPP_PACING.perAccountPerSecond),
  SLACK_SIGNING_SECRET: envText,
  SLACK_BOT_TOKEN: envText,
  SLACK_API_BASE_URL: envUrl().transform((value) => value ?? "https://slack.com/api"),
  SLACK_API_TIMEOUT_MS: timeoutMs(10_000),
  SLACK_PACING_PER_CHAT_MS: perChatMs(SLACK_PACING.perChatMs),
  SLACK_PACING_PER_SECOND: perSecond(SLACK_PACING.perAccountPerSecond),
  TELEGRAM_BOT_TOKEN: envText,
  TELEGRAM_WEBHOOK_SECRET_TOKEN: envText,
  TELEGRAM_API_BASE_URL: envUrl().transform((value) => value ?? "https://api.telegram.org"),
  TELEGRAM_API_TIMEOUT_MS: timeoutMs(10_000),
  TELEGRAM_PACING_PER_CHAT_MS: perChatMs(TELEGRAM_PACING.perChatMs),
  TELEGRAM_PACING_PER_SECOND: perSecond(TELEGRAM_PACING.perAccountPerSecond),
  AGENT_URL: envUrl(),
  AGENT_TIMEOUT_MS: timeoutMs(30_000),
  MESSAGING_WORKER_CONCURRENCY: envInteger(4, { min: 1, max: 64 }),
  // At least 10 ms: 0 would make every worker poll the database in a busy loop.
  MESSAGING_WORKER_POLL_MS: envInteger(1_000, { min: 10, max: 86_400_000 }),
  MESSAGING_WORKER_START_DELAY_MS: milliseconds(0),
  MESSAGING_MAX_ATTEMPTS: envInteger(8, { min: 1, max: 100 }),
  MESSAGING_RETRY_BASE_MS: milliseconds(2_000),
  MESSAGING_RETRY_MAX_MS: milliseconds(300_000),
  MESSAGING_VISIBILITY_TIMEOUT_MS: envInteger(180_000, { min: 1_000, max: 86_400_000 }),
  // Messages (or worker updates) per shared commit; 1 gives every delivery and every update a commit of its own.
  MESSAGING_COMMIT_MAX_BATCH: envInteger(256, { min: 1, max: 5_000 }),
  // Longest a delivery waits for its commit to start before it is refused with 503 (nothing stored).
  MESSAGING_COMMIT_MAX_WAIT_MS: envInteger(2_000, { min: 1, max: 60_000 }),
  // Longest a started commit (or a worker's update) may take before its deliveries are refused with 503.
  MESSAGING_COMMIT_TIMEOUT_MS: envInteger(3_000, { min: 1, max: 60_000 }),
  // `conversation`: one message of a conversation at a time, in the chat product's order; `none`: any order.
  MESSAGING_ORDERING: envEnum(["conversation", "none"], "conversation"),
  // Days finished rows are kept (done, rejected, notice; failed); 0 keeps them forever.
  MESSAGING_RETENTION_DONE_DAYS: envInteger(30, { min: 0, max: 36_500 }),
  MESSAGING_RETENTION_FAILED_DAYS: envInteger(90, { min: 0, max: 36_500 }),
});

export type MessagingConfig = z.infer<typeof messagingConfigSchema>;
