import { type Channel, slack, telegram, whatsapp } from "@agent-platform/messaging";
import type { Logger } from "pino";
import { invalidEnv } from "../config.js";
import type { MessagingConfig } from "./config.js";

/**
 * Each channel whose variables are set, checked the same way: a partial configuration names what is missing.
 * Only wiring: the channels check their own options, and `createMessaging` refuses an unauthenticated channel
 * in production (PLATFORM_ENV) and warns about one elsewhere.
 */
export function channelsFromEnv(config: MessagingConfig, logger: Logger): Channel[] {
  return [
    whatsappFromEnv(config, logger.child({ channel: "whatsapp" })),
    slackFromEnv(config, logger.child({ channel: "slack" })),
    telegramFromEnv(config, logger.child({ channel: "telegram" })),
  ].filter((channel): channel is Channel => channel !== null);
}

function requireAll(channel: string, required: Record<string, string | undefined>, hint = ""): void {
  const missing = Object.entries(required)
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);
  if (missing.length > 0) {
    throw invalidEnv([`${channel} channel partly configured; also set ${missing.join(", ")}${hint}`]);
  }
}

function whatsappFromEnv(config: MessagingConfig, logger: Logger): Channel | null {
  const configured = [
    config.WHATSAPP_VERIFY_TOKEN,
    config.WHATSAPP_APP_SECRET,
    config.WHATSAPP_ACCESS_TOKEN,
    config.WHATSAPP_PHONE_NUMBER_ID,
  ].some((value) => value !== undefined);
  if (!configured) return null;
  const appSecret = config.WHATSAPP_APP_SECRET;
  const skip = config.WHATSAPP_SKIP_SIGNATURE_VALIDATION;
  requireAll(
    "WhatsApp",
    {
      WHATSAPP_ACCESS_TOKEN: config.WHATSAPP_ACCESS_TOKEN,
      WHATSAPP_PHONE_NUMBER_ID: config.WHATSAPP_PHONE_NUMBER_ID,
      WHATSAPP_APP_SECRET: skip ? "" : appSecret,
    },
    skip ? "" : " (or WHATSAPP_SKIP_SIGNATURE_VALIDATION=true outside production)",
  );
  if (appSecret !== undefined && skip) {
    logger.warn("WHATSAPP_SKIP_SIGNATURE_VALIDATION is ignored because WHATSAPP_APP_SECRET is set");
  }
  if (config.WHATSAPP_VERIFY_TOKEN === undefined) {
    logger.warn("WHATSAPP_VERIFY_TOKEN is not set; the subscription handshake answers 500 until it is");
  }
  logger.info(
    { agent: config.AGENT_URL === undefined ? "echo" : "http", api_base_url: config.WHATSAPP_API_BASE_URL },
    "WhatsApp channel configured",
  );
  return whatsapp({
    verifyToken: config.WHATSAPP_VERIFY_TOKEN,
    appSecret,
    skipSignatureValidation: appSecret === undefined,
    accessToken: config.WHATSAPP_ACCESS_TOKEN ?? "",
    phoneNumberId: config.WHATSAPP_PHONE_NUMBER_ID ?? "",
    apiBaseUrl: config.WHATSAPP_API_BASE_URL,
    apiTimeoutMs: config.WHATSAPP_API_TIMEOUT_MS,
    pacing: {
      perChatMs: config.WHATSAPP_PACING_PER_CHAT_MS,
      perAccountPerSecond: config.WHATSAPP_PACING_PER_SECOND,
    },
  });
}

function slackFromEnv(config: MessagingConfig, logger: Logger): Channel | null {
  const { SLACK_SIGNING_SECRET: signingSecret, SLACK_BOT_TOKEN: botToken } = config;
  if (signingSecret === undefined && botToken === undefined) return null;
  requireAll("Slack", { SLACK_SIGNING_SECRET: signingSecret, SLACK_BOT_TOKEN: botToken });
  logger.info({ api_base_url: config.SLACK_API_BASE_URL }, "Slack channel configured");
  return slack({
    signingSecret: signingSecret ?? "",
    botToken: botToken ?? "",
    apiBaseUrl: config.SLACK_API_BASE_URL,
    apiTimeoutMs: config.SLACK_API_TIMEOUT_MS,
    pacing: {
      perChatMs: config.SLACK_PACING_PER_CHAT_MS,
      perAccountPerSecond: config.SLACK_PACING_PER_SECOND,
    },
  });
}

function telegramFromEnv(config: MessagingConfig, logger: Logger): Channel | null {
  const { TELEGRAM_BOT_TOKEN: botToken, TELEGRAM_WEBHOOK_SECRET_TOKEN: secretToken } = config;
  if (botToken === undefined && secretToken === undefined) return null;
  requireAll("Telegram", { TELEGRAM_BOT_TOKEN: botToken });
  logger.info({ api_base_url: config.TELEGRAM_API_BASE_URL }, "Telegram channel configured");
  return telegram({
    botToken: botToken ?? "",
    secretToken,
    // Without TELEGRAM_WEBHOOK_SECRET_TOKEN: refused by createMessaging in production, a warning elsewhere.
    allowUnauthenticated: secretToken === undefined,
    apiBaseUrl: config.TELEGRAM_API_BASE_URL,
    apiTimeoutMs: config.TELEGRAM_API_TIMEOUT_MS,
    pacing: {
      perChatMs: config.TELEGRAM_PACING_PER_CHAT_MS,
      perAccountPerSecond: config.TELEGRAM_PACING_PER_SECOND,
    },
  });
}
