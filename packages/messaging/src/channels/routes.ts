import type { ChannelRoute } from "../channel.js";

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
