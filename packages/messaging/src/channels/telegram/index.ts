import { configError } from "@agent-platform/common/internal";
import type { Channel } from "../../channel.js";
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
}

export const TELEGRAM_DEFAULT_API_BASE_URL = "https://api.telegram.org";
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
const BOT_TOKEN = /^\d+:[A-Za-z0-9_-]+$/;

/** Telegram (Bot API webhook). Throws a ConfigError for options it cannot work with. */
export function telegram(options: TelegramOptions): Channel {
  const problems: string[] = [];
  // The token itself is never echoed: it is a credential.
  if (!BOT_TOKEN.test(options.botToken ?? "")) problems.push("botToken is not of the form <bot id>:<secret>");
  if (options.secretToken !== undefined && !SECRET_TOKEN.test(options.secretToken)) {
    problems.push("secretToken must be 1-256 characters of A-Z, a-z, 0-9, _ and -");
  }
  if (options.secretToken === undefined && options.allowUnauthenticated !== true) {
    problems.push("secretToken is required (or allowUnauthenticated: true, for local development)");
  }
  if (problems.length > 0)
    throw configError("messaging", `telegram: ${problems.join("; ")}`, undefined, problems);
  return createTelegramChannel({
    botToken: options.botToken,
    secretToken: options.secretToken,
    apiBaseUrl: options.apiBaseUrl ?? TELEGRAM_DEFAULT_API_BASE_URL,
    apiTimeoutMs: options.apiTimeoutMs ?? 10_000,
  });
}
