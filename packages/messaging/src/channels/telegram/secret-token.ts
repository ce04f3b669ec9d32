import type { HeaderReader } from "../../channel.js";
import { secureEquals } from "../../secure-compare.js";

/**
 * Telegram sends the `secret_token` given to `setWebhook` in `X-Telegram-Bot-Api-Secret-Token` with every
 * update. Missing and wrong are both "not authentic".
 */
export async function isValidTelegramSecretToken(
  headers: HeaderReader,
  secretToken: string,
): Promise<boolean> {
  if (secretToken === "") throw new TypeError("A Telegram secret token must not be empty");
  const given = headers.get("x-telegram-bot-api-secret-token");
  return given !== null && secureEquals(given, secretToken);
}
