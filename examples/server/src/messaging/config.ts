import { z } from "zod";

/** An unset variable and an empty one mean the same: not configured. */
const optionalString = z.preprocess((value) => (value === "" ? undefined : value), z.string().optional());

const flag = z
  .enum(["true", "false", "1", "0", "yes", "no", ""])
  .default("false")
  .transform((value) => value === "true" || value === "1" || value === "yes");

const milliseconds = (fallback: number) => z.coerce.number().int().min(0).max(86_400_000).default(fallback);

/**
 * Environment variables of the messaging channel. Every variable is optional: without the WhatsApp
 * credentials the channel is simply not mounted. The server merges this object into its env schema.
 */
export const messagingConfigSchema = z.object({
  WHATSAPP_VERIFY_TOKEN: optionalString,
  WHATSAPP_APP_SECRET: optionalString,
  WHATSAPP_ACCESS_TOKEN: optionalString,
  WHATSAPP_PHONE_NUMBER_ID: optionalString,
  WHATSAPP_API_BASE_URL: z.url({ protocol: /^https?$/ }).default("https://graph.facebook.com/v25.0"),
  WHATSAPP_SKIP_SIGNATURE_VALIDATION: flag,
  WHATSAPP_API_TIMEOUT_MS: milliseconds(10_000),
  AGENT_URL: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.url({ protocol: /^https?$/ }).optional(),
  ),
  AGENT_TIMEOUT_MS: milliseconds(30_000),
  MESSAGING_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  MESSAGING_WORKER_POLL_MS: milliseconds(1_000),
  MESSAGING_WORKER_START_DELAY_MS: milliseconds(0),
  MESSAGING_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  MESSAGING_RETRY_BASE_MS: milliseconds(2_000),
  MESSAGING_RETRY_MAX_MS: milliseconds(300_000),
  // Messages per shared commit on the acknowledgement path; 1 gives every delivery a commit of its own.
  MESSAGING_COMMIT_MAX_BATCH: z.coerce.number().int().min(1).max(5_000).default(256),
  // Longest a delivery waits for its commit to start before it is refused with 503 (nothing stored).
  MESSAGING_COMMIT_MAX_WAIT_MS: z.coerce.number().int().min(1).max(60_000).default(2_000),
  MESSAGING_VISIBILITY_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(180_000),
});

export type MessagingConfig = z.infer<typeof messagingConfigSchema>;
