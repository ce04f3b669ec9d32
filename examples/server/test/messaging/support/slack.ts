import { slackSignatureHeaders } from "@agent-platform/test-support/webhook-signatures";

export const SIGNING_SECRET = "test-slack-signing-secret";
export const BOT_TOKEN = "xoxb-test-bot-token";
export const TEAM_ID = "T0TEST";

/** Environment of a configured Slack channel whose replies go to the stand-in Web API at `apiUrl`. */
export function slackEnv(apiUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_API_BASE_URL: apiUrl,
    MESSAGING_WORKER_POLL_MS: "100",
    MESSAGING_RETRY_BASE_MS: "50",
    MESSAGING_RETRY_MAX_MS: "200",
    ...extra,
  };
}

/** An Events API `event_callback`; `event` defaults to a direct message from a person. */
export function slackEvent(eventId: string, event: Record<string, unknown>) {
  return {
    token: "deprecated-verification-token",
    team_id: TEAM_ID,
    api_app_id: "A0TEST",
    type: "event_callback",
    event_id: eventId,
    event_time: 1_700_000_000,
    event: { ts: "1700000000.000100", ...event },
  };
}

export function directMessage(eventId: string, channel: string, text: string, extra: object = {}) {
  return slackEvent(eventId, {
    type: "message",
    channel_type: "im",
    channel,
    user: "U0PERSON",
    text,
    ...extra,
  });
}

export function mention(eventId: string, channel: string, text: string, ts: string) {
  return slackEvent(eventId, { type: "app_mention", channel, user: "U0PERSON", text, ts });
}

/** POSTs `body` to /slack/events, signed now with the signing secret unless `headers` says otherwise. */
export function postSlack(
  baseUrl: string,
  body: object | string,
  options: {
    secret?: string;
    timestamp?: number;
    headers?: Record<string, string> | null;
    retry?: number | undefined;
  } = {},
): Promise<Response> {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const signed = slackSignatureHeaders(raw, options.secret ?? SIGNING_SECRET, options.timestamp);
  const headers = options.headers === undefined ? signed : (options.headers ?? {});
  return fetch(`${baseUrl}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...headers,
      ...(options.retry === undefined ? {} : { "x-slack-retry-num": String(options.retry) }),
    },
    body: raw,
  });
}
