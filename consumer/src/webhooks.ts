import { createHmac } from "node:crypto";
import { expect, inject } from "vitest";

// The requests every runtime's fixture/webhooks.ts gets, signed here with node:crypto: an implementation
// apart from the WebCrypto one that checks them, so a runtime that decides otherwise shows.

const whatsAppDelivery = {
  object: "whatsapp_business_account",
  entry: [
    {
      changes: [
        {
          field: "messages",
          value: {
            metadata: { phone_number_id: "222" },
            messages: [{ id: "m1", from: "491", type: "text", text: { body: "hi" } }],
          },
        },
      ],
    },
  ],
};
const slackEvent = {
  type: "event_callback",
  team_id: "T1",
  event_id: "Ev1",
  event: { type: "message", channel_type: "im", channel: "D1", user: "U1", text: "hi", ts: "1.1" },
};
const telegramUpdate = {
  update_id: 7,
  message: { message_id: 1, chat: { id: -100 }, from: { id: 5, is_bot: false }, text: "hi" },
};

const hmacHex = (secret: string, data: string) => createHmac("sha256", secret).update(data).digest("hex");

function whatsAppHeaders(body: string, secret: string): Record<string, string> {
  return { "x-hub-signature-256": `sha256=${hmacHex(secret, body)}` };
}

function slackHeaders(body: string, secret: string, secondsAgo = 0): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000) - secondsAgo);
  return {
    "x-slack-request-timestamp": timestamp,
    "x-slack-signature": `v0=${hmacHex(secret, `v0:${timestamp}:${body}`)}`,
  };
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, { method: "POST", body, headers });
  return { status: response.status, body: await response.json() };
}

/**
 * What fixture/webhooks.ts must decide on every runtime: for each channel a genuine request is parsed,
 * a forged, unsigned or stale one is 403; an authentic body of the wrong shape is 400; WhatsApp's
 * handshake passes with the verify token only.
 */
export async function expectWebhookDecisions(baseUrl: string): Promise<void> {
  const secrets = inject("messaging");
  const refused = { status: 403, body: {} };

  const whatsApp = `${baseUrl}/whatsapp/webhook`;
  const delivery = JSON.stringify(whatsAppDelivery);
  expect(await post(whatsApp, delivery, whatsAppHeaders(delivery, secrets.whatsAppAppSecret))).toEqual({
    status: 200,
    body: {
      parsed: {
        kind: "events",
        statuses: 0,
        invalid: [],
        messages: [
          {
            id: "m1",
            accountId: "222",
            from: "491",
            type: "text",
            text: "hi",
            supported: true,
            raw: whatsAppDelivery.entry[0]?.changes[0]?.value.messages[0],
          },
        ],
      },
    },
  });
  expect(await post(whatsApp, delivery, whatsAppHeaders(delivery, "another-secret"))).toEqual(refused);
  expect(await post(whatsApp, delivery, {})).toEqual(refused);
  const signedOther = whatsAppHeaders(delivery, secrets.whatsAppAppSecret);
  expect(await post(whatsApp, `${delivery} `, signedOther)).toEqual(refused);
  const misshapen = JSON.stringify({ object: "whatsapp_business_account", entry: "x" });
  const invalid = await post(whatsApp, misshapen, whatsAppHeaders(misshapen, secrets.whatsAppAppSecret));
  expect(invalid).toMatchObject({
    status: 400,
    body: { invalid: expect.stringMatching(/^Invalid WhatsApp/) },
  });
  const handshake = (token: string) =>
    fetch(`${whatsApp}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=c42`);
  const passed = await handshake(secrets.whatsAppVerifyToken);
  expect([passed.status, await passed.text()]).toEqual([200, "c42"]);
  expect((await handshake(`${secrets.whatsAppVerifyToken}x`)).status).toBe(403);

  const slack = `${baseUrl}/slack/events`;
  const event = JSON.stringify(slackEvent);
  expect(await post(slack, event, slackHeaders(event, secrets.slackSigningSecret))).toMatchObject({
    status: 200,
    body: {
      parsed: {
        kind: "events",
        messages: [
          { id: "Ev1", accountId: "T1", from: "U1", conversation: "D1", type: "message", text: "hi" },
        ],
      },
    },
  });
  expect(await post(slack, event, slackHeaders(event, "another-secret"))).toEqual(refused);
  // Six minutes old: past Slack's five-minute window, however genuine the signature.
  expect(await post(slack, event, slackHeaders(event, secrets.slackSigningSecret, 360))).toEqual(refused);
  expect(await post(slack, event, {})).toEqual(refused);

  const telegram = `${baseUrl}/telegram/webhook`;
  const update = JSON.stringify(telegramUpdate);
  const tokenHeader = (token: string) => ({ "x-telegram-bot-api-secret-token": token });
  expect(await post(telegram, update, tokenHeader(secrets.telegramSecretToken))).toMatchObject({
    status: 200,
    body: {
      parsed: {
        kind: "events",
        messages: [
          { id: "123:7", accountId: "123", from: "5", conversation: "-100", type: "text", text: "hi" },
        ],
      },
    },
  });
  expect(await post(telegram, update, tokenHeader(`${secrets.telegramSecretToken}x`))).toEqual(refused);
  expect(await post(telegram, update, {})).toEqual(refused);
}
