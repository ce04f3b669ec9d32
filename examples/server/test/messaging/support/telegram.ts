export const BOT_ID = "7000001";
export const TELEGRAM_TOKEN = `${BOT_ID}:test-telegram-token_AbC`;
export const SECRET_TOKEN = "test-secret_token-1";

/** Environment of a configured Telegram channel whose replies go to the stand-in Bot API at `apiUrl`. */
export function telegramEnv(apiUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
    TELEGRAM_WEBHOOK_SECRET_TOKEN: SECRET_TOKEN,
    TELEGRAM_API_BASE_URL: apiUrl,
    MESSAGING_WORKER_POLL_MS: "100",
    MESSAGING_RETRY_BASE_MS: "50",
    MESSAGING_RETRY_MAX_MS: "200",
    ...extra,
  };
}

/** A Bot API update carrying a text message from a person in chat `chatId`. */
export function textUpdate(updateId: number, chatId: number, text: string, from: object = {}) {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1_700_000_000,
      chat: { id: chatId, type: "private" },
      from: { id: chatId, is_bot: false, first_name: "Test", ...from },
      text,
    },
  };
}

/** POSTs `body` to /telegram/webhook with the secret token header unless `secret` says otherwise (null: none). */
export function postTelegram(
  baseUrl: string,
  body: object | string,
  options: { secret?: string | null } = {},
): Promise<Response> {
  const secret = options.secret === undefined ? SECRET_TOKEN : options.secret;
  return fetch(`${baseUrl}/telegram/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret === null ? {} : { "x-telegram-bot-api-secret-token": secret }),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
