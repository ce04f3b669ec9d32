import type { Channel } from "../../channel.js";
import { DEFAULT_API_TIMEOUT_MS, OptionChecks, optionsObject } from "../../options.js";
import { checkPacing, type PacingOptions, TELEGRAM_PACING } from "../../pacing.js";
import { createTelegramChannel } from "./channel.js";

/** Options of `telegram()`. */
export interface TelegramOptions {
  /** The bot token from @BotFather (`<bot id>:<secret>`). */
  botToken: string;
  /**
   * The `secret_token` given to `setWebhook` (1–256 of `A-Z a-z 0-9 _ -`); every update must carry it in
   * `X-Telegram-Bot-Api-Secret-Token`. Without it, anyone who knows the URL can post updates: allowed only
   * with `allowUnauthenticated: true`, for local development.
   */
  secretToken?: string | undefined;
  allowUnauthenticated?: boolean;
  /** Default `https://api.telegram.org`. */
  apiBaseUrl?: string;
  /** Default 10,000. */
  apiTimeoutMs?: number;
  /** How fast replies go out; defaults: the chat product's documented limits (`TELEGRAM_PACING`). */
  pacing?: PacingOptions;
}

export const TELEGRAM_DEFAULT_API_BASE_URL = "https://api.telegram.org";
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
const BOT_TOKEN = /^\d+:[A-Za-z0-9_-]+$/;

const OPTIONS = [
  "botToken",
  "secretToken",
  "allowUnauthenticated",
  "apiBaseUrl",
  "apiTimeoutMs",
  "pacing",
] as const;

/**
 * Telegram (Bot API webhook). Throws a ConfigError naming each option it cannot work with. Without a
 * secret token (`allowUnauthenticated: true`) the channel is unauthenticated, which `createMessaging`
 * refuses in production.
 */
export function telegram(options: TelegramOptions): Channel {
  const checks = new OptionChecks("telegram");
  const given = optionsObject(checks, "options", options);
  checks.knownKeys("", given, OPTIONS);
  const botToken = given.botToken;
  // The token itself is never echoed: it is a credential.
  if (typeof botToken !== "string" || !BOT_TOKEN.test(botToken)) {
    checks.problem("botToken", "is not of the form <bot id>:<secret>");
  }
  const secretToken = given.secretToken;
  if (secretToken !== undefined && (typeof secretToken !== "string" || !SECRET_TOKEN.test(secretToken))) {
    checks.problem("secretToken", "must be 1-256 characters of A-Z, a-z, 0-9, _ and -");
  }
  const allowUnauthenticated = checks.boolean("allowUnauthenticated", given.allowUnauthenticated);
  if (secretToken === undefined && !allowUnauthenticated) {
    checks.problem("secretToken", "is required (or allowUnauthenticated: true, outside production)");
  }
  const apiBaseUrl = checks.url("apiBaseUrl", given.apiBaseUrl, TELEGRAM_DEFAULT_API_BASE_URL);
  const apiTimeoutMs = checks.integer("apiTimeoutMs", given.apiTimeoutMs, DEFAULT_API_TIMEOUT_MS, 1);
  const pacing = checkPacing(checks, given.pacing, TELEGRAM_PACING);
  checks.done();
  return createTelegramChannel({
    botToken: botToken as string,
    secretToken: secretToken as string | undefined,
    apiBaseUrl,
    apiTimeoutMs,
    pacing,
  });
}
