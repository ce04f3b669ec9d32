import { type Channel, slack, telegram, whatsapp } from "@agent-platform/messaging";
import type { Logger } from "pino";
import { invalidEnv } from "../config.js";
import type { MessagingConfig } from "./config.js";

/** Each channel whose variables are set, checked the same way: a partial configuration names what is missing. */
export function channelsFromEnv(config: MessagingConfig, production: boolean, logger: Logger): Channel[] {
  return [
    whatsappFromEnv(config, production, logger.child({ channel: "whatsapp" })),
    slackFromEnv(config, logger.child({ channel: "slack" })),
    telegramFromEnv(config, production, logger.child({ channel: "telegram" })),
  ].filter((channel): channel is Channel => channel !== null);
}

function requireAll(channel: string, required: Record<string, string | undefined>): void {
  const missing = Object.entries(required)
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);
  if (missing.length > 0) {
    throw invalidEnv([`${channel} channel partly configured; also set ${missing.join(", ")}`]);
  }
}

function whatsappFromEnv(config: MessagingConfig, production: boolean, logger: Logger): Channel | null {
  const configured = [
    config.WHATSAPP_VERIFY_TOKEN,
    config.WHATSAPP_APP_SECRET,
    config.WHATSAPP_ACCESS_TOKEN,
    config.WHATSAPP_PHONE_NUMBER_ID,
  ].some((value) => value !== undefined);
  if (!configured) return null;
  const { accessToken, phoneNumberId, appSecret } = checkWhatsAppConfig(config, production, logger);
  logger.info(
    { agent: config.AGENT_URL === undefined ? "echo" : "http", api_base_url: config.WHATSAPP_API_BASE_URL },
    "WhatsApp channel configured",
  );
  return whatsapp({
    verifyToken: config.WHATSAPP_VERIFY_TOKEN,
    appSecret,
    skipSignatureValidation: appSecret === undefined,
    accessToken,
    phoneNumberId,
    apiBaseUrl: config.WHATSAPP_API_BASE_URL,
    apiTimeoutMs: config.WHATSAPP_API_TIMEOUT_MS,
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
  });
}

function telegramFromEnv(config: MessagingConfig, production: boolean, logger: Logger): Channel | null {
  const { TELEGRAM_BOT_TOKEN: botToken, TELEGRAM_WEBHOOK_SECRET_TOKEN: secretToken } = config;
  if (botToken === undefined && secretToken === undefined) return null;
  requireAll("Telegram", { TELEGRAM_BOT_TOKEN: botToken });
  if (secretToken === undefined) {
    if (production) {
      throw invalidEnv(
        ["TELEGRAM_WEBHOOK_SECRET_TOKEN: required in production (without it anyone can post updates)"],
        "TELEGRAM_WEBHOOK_SECRET_TOKEN",
      );
    }
    logger.warn(
      "TELEGRAM_WEBHOOK_SECRET_TOKEN is not set: updates are NOT authenticated; anyone can post them",
    );
  }
  logger.info({ api_base_url: config.TELEGRAM_API_BASE_URL }, "Telegram channel configured");
  return telegram({
    botToken: botToken ?? "",
    secretToken,
    allowUnauthenticated: secretToken === undefined,
    apiBaseUrl: config.TELEGRAM_API_BASE_URL,
    apiTimeoutMs: config.TELEGRAM_API_TIMEOUT_MS,
  });
}

interface WhatsAppCredentials {
  accessToken: string;
  phoneNumberId: string;
  /** Undefined only when skipping signature validation is allowed and asked for. */
  appSecret: string | undefined;
}

function checkWhatsAppConfig(
  config: MessagingConfig,
  production: boolean,
  logger: Logger,
): WhatsAppCredentials {
  const accessToken = config.WHATSAPP_ACCESS_TOKEN;
  const phoneNumberId = config.WHATSAPP_PHONE_NUMBER_ID;
  const appSecret = config.WHATSAPP_APP_SECRET;
  const skip = config.WHATSAPP_SKIP_SIGNATURE_VALIDATION;
  if (appSecret === undefined && skip && production) {
    throw invalidEnv(
      [
        "WHATSAPP_APP_SECRET: required in production (WHATSAPP_SKIP_SIGNATURE_VALIDATION is not honoured there)",
      ],
      "WHATSAPP_APP_SECRET",
    );
  }
  const missing: string[] = [];
  if (accessToken === undefined) missing.push("WHATSAPP_ACCESS_TOKEN");
  if (phoneNumberId === undefined) missing.push("WHATSAPP_PHONE_NUMBER_ID");
  if (appSecret === undefined && !skip) {
    missing.push("WHATSAPP_APP_SECRET (or WHATSAPP_SKIP_SIGNATURE_VALIDATION=true outside production)");
  }
  if (accessToken === undefined || phoneNumberId === undefined || missing.length > 0) {
    throw invalidEnv([`WhatsApp channel partly configured; also set ${missing.join(", ")}`]);
  }
  if (appSecret === undefined) {
    logger.warn(
      "WHATSAPP_SKIP_SIGNATURE_VALIDATION: webhook signatures are NOT checked; anyone can post messages",
    );
  } else if (skip) {
    logger.warn("WHATSAPP_SKIP_SIGNATURE_VALIDATION is ignored because WHATSAPP_APP_SECRET is set");
  }
  if (config.WHATSAPP_VERIFY_TOKEN === undefined) {
    logger.warn("WHATSAPP_VERIFY_TOKEN is not set; the subscription handshake answers 500 until it is");
  }
  return { accessToken, phoneNumberId, appSecret };
}
