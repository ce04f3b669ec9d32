/** Where a channel is mounted and how its requests authenticate: data for routers and API docs. */
export interface ChannelRoute {
  /** `/{name}/status`, `/{name}/inbox`, and the inbox's channel column. */
  name: string;
  webhookPath: string;
  /**
   * How the chat product checks the URL: a GET with a query (WhatsApp), a POST whose body carries a
   * challenge (Slack's `url_verification`), or not at all (Telegram).
   */
  handshake: "query" | "body" | "none";
  /** Request headers that authenticate a delivery, with what they carry (for the API description). */
  authHeaders: Record<string, string>;
}

export const WHATSAPP_ROUTE: ChannelRoute = {
  name: "whatsapp",
  webhookPath: "/whatsapp/webhook",
  handshake: "query",
  authHeaders: { "x-hub-signature-256": "sha256=<hex HMAC-SHA256 of the body under the app secret>" },
};

export const SLACK_ROUTE: ChannelRoute = {
  name: "slack",
  webhookPath: "/slack/events",
  handshake: "body",
  authHeaders: {
    "x-slack-signature": "v0=<hex HMAC-SHA256 of `v0:{timestamp}:{body}` under the signing secret>",
    "x-slack-request-timestamp": "Unix seconds; refused when more than 5 minutes from now",
  },
};

export const TELEGRAM_ROUTE: ChannelRoute = {
  name: "telegram",
  webhookPath: "/telegram/webhook",
  handshake: "none",
  authHeaders: { "x-telegram-bot-api-secret-token": "the secret_token given to setWebhook" },
};

/** Every channel this package ships, configured or not: each has a status route saying which. */
export const CHANNEL_ROUTES: readonly ChannelRoute[] = [WHATSAPP_ROUTE, SLACK_ROUTE, TELEGRAM_ROUTE];
