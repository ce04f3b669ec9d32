import { slackSignatureHeaders, whatsAppSignature } from "@agent-platform/test-support/webhook-signatures";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { capturedConsole } from "../../common/test/plain-loggers.js";
import { slack } from "../src/channels/slack/index.js";
import { telegram } from "../src/channels/telegram/index.js";
import { whatsapp } from "../src/channels/whatsapp/index.js";
import {
  type GraphStub,
  type SlackStub,
  startGraphStub,
  startSlackStub,
  startTelegramStub,
  type TelegramStub,
  waitFor,
} from "./support/api-stubs.js";
import { connect, DATABASES, type TestDatabase } from "./support/database.js";
import { type ServedMessaging, serveMessaging } from "./support/serve.js";

/**
 * A chat product changes its format (a field added, an optional one dropped, the sender renamed) and
 * WhatsApp's usernames hide phone numbers behind business-scoped user ids (BSUID): every message is
 * stored, the ones that can be answered are answered, and the others are kept as `rejected` rows with
 * their reason, while the delivery is acknowledged 200 so the chat product neither retries nor drops it.
 *
 * The WhatsApp payloads follow the shapes Meta documents for usernames and BSUIDs ("Business-scoped user
 * IDs", WhatsApp Business Platform): `contacts[]` carries `user_id` (the BSUID, e.g. `US.` and digits),
 * `profile.username` when the user set one, and `wa_id` only when the number is available; each message
 * carries `from_user_id`, and `from` only when the number is available; a parent BSUID (`.ENT.`) comes as
 * `parent_user_id` / `from_parent_user_id`. A reply to a BSUID names it in `recipient` instead of `to`.
 */

const APP_SECRET = "app-secret";
const PHONE_NUMBER_ID = "106540352242922";
const SIGNING_SECRET = "slack-signing-secret";
const TELEGRAM_TOKEN = "4242:telegram-secret-part";
const TELEGRAM_SECRET = "telegram-webhook-secret";

/** One change of a Cloud API delivery, with its metadata, contacts and messages. */
function change(contacts: object[] | undefined, messages: unknown[]) {
  return {
    field: "messages",
    value: {
      messaging_product: "whatsapp",
      metadata: { display_phone_number: "15550783881", phone_number_id: PHONE_NUMBER_ID },
      ...(contacts === undefined ? {} : { contacts }),
      messages,
    },
  };
}

function deliveryOf(...changes: object[]) {
  return { object: "whatsapp_business_account", entry: [{ id: "102290129340398", changes }] };
}

const text = (body: string) => ({ type: "text", text: { body } });

describe.each(DATABASES)("a chat product changing its format, on $name", ({ fresh }) => {
  let database: TestDatabase;
  let graph: GraphStub;
  let slackApi: SlackStub;
  let telegramApi: TelegramStub;
  let served: ServedMessaging;
  let sql: ReturnType<typeof connect>;
  let logs: () => string;

  beforeEach(async () => {
    database = await fresh();
    [graph, slackApi, telegramApi] = await Promise.all([
      startGraphStub(),
      startSlackStub(),
      startTelegramStub(),
    ]);
    sql = connect(database);
    const { console, output } = capturedConsole();
    logs = output;
    served = await serveMessaging({
      sql,
      channels: [
        whatsapp({
          appSecret: APP_SECRET,
          accessToken: "a",
          phoneNumberId: PHONE_NUMBER_ID,
          apiBaseUrl: graph.url,
        }),
        slack({ signingSecret: SIGNING_SECRET, botToken: "xoxb-1", apiBaseUrl: slackApi.url }),
        telegram({ botToken: TELEGRAM_TOKEN, secretToken: TELEGRAM_SECRET, apiBaseUrl: telegramApi.url }),
      ],
      // `console` as the logger: its records carry the bindings of the workers' children.
      logger: console,
      worker: { pollMs: 50, retryBaseMs: 10, retryMaxMs: 10 },
    });
  });
  afterEach(async () => {
    await served.close();
    await sql.end();
    await Promise.all([graph.close(), slackApi.close(), telegramApi.close()]);
    await database.drop();
  });

  const postWhatsApp = (body: unknown) => {
    const raw = JSON.stringify(body);
    return fetch(`${served.url}/whatsapp/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": whatsAppSignature(raw, APP_SECRET),
      },
      body: raw,
    });
  };

  async function rows(channel: string) {
    return sql<
      { message_id: string; sender: string; status: string; last_error: string | null; message: unknown }[]
    >`
      SELECT message_id, sender, status, attempts, last_error, message FROM messaging.inbox
      WHERE channel = ${channel} ORDER BY message_id`;
  }

  it("WhatsApp: stores and answers BSUID senders, records system messages and what fails the schema, in one delivery", async () => {
    const bsuid = "US.13491208655302741918";
    const renamed = {
      id: "wamid.renamed",
      timestamp: "1739321024",
      sender: "15550001111",
      ...text("who am I"),
    };
    const body = deliveryOf(
      // A user who set a username: no phone number anywhere, only the BSUID.
      change(
        [{ profile: { name: "Sheena Nelson", username: "@sheena" }, user_id: bsuid }],
        [
          {
            from_user_id: bsuid,
            id: "wamid.username",
            timestamp: "1739321024",
            ...text("hi from a username"),
          },
        ],
      ),
      // A user without a username: the number and the BSUIDs (a parent one too) side by side.
      change(
        [
          {
            profile: { name: "Ana" },
            wa_id: "16505551234",
            user_id: "US.1100220033",
            parent_user_id: "US.ENT.11815799212886844830",
          },
        ],
        [
          {
            from: "16505551234",
            from_user_id: "US.1100220033",
            from_parent_user_id: "US.ENT.11815799212886844830",
            id: "wamid.phone",
            timestamp: "1739321025",
            ...text("hi with a number"),
          },
        ],
      ),
      // The sender only in the change's one contact; a field added, the optional timestamp dropped.
      change(
        [{ profile: { name: "Bo", username: "@bo" }, user_id: "BR.1502576394655843" }],
        [{ id: "wamid.contact-only", brand_new_field: { nested: true }, ...text("sender in contacts") }],
      ),
      // System messages (no contacts array): a changed number, and a changed user id naming only the new id.
      change(undefined, [
        {
          from: "16505551234",
          id: "wamid.system-number",
          timestamp: "1739321026",
          type: "system",
          system: {
            body: "User Ana changed from 16505551234 to 12195555358",
            wa_id: "12195555358",
            type: "user_changed_number",
          },
        },
        {
          id: "wamid.system-user-id",
          timestamp: "1739321027",
          type: "system",
          system: {
            body: "User @bo changed their user id",
            user_id: "BR.9990001112",
            type: "user_changed_user_id",
          },
        },
      ]),
      // The sender renamed (`sender`), with two contacts to choose from: no sender can be told.
      change(
        [
          { profile: { name: "X" }, user_id: "US.1" },
          { profile: { name: "Y" }, user_id: "US.2" },
        ],
        [renamed, { id: 42, from: "15550002222", ...text("retyped id") }],
      ),
    );

    const response = await postWhatsApp(body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "accepted", received: 5, duplicates: 0, rejected: 2 });
    // Meta redelivers what it had no 200 for: nothing is stored twice, the rejected ones included.
    const again = await postWhatsApp(body);
    expect(await again.json()).toEqual({ status: "accepted", received: 0, duplicates: 7, rejected: 0 });

    await waitFor("three replies", () => graph.accepted().length === 3);
    await waitFor("every stored message settled", async () =>
      (await rows("whatsapp")).every((row) => ["done", "rejected", "notice"].includes(row.status)),
    );
    const replies = graph.accepted().map((request) => request.body);
    // To the BSUID in `recipient` (no phone number to send `to`); to the number when there is one.
    expect(replies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          recipient: bsuid,
          text: { preview_url: false, body: "hi from a username" },
        }),
        expect.objectContaining({
          to: "16505551234",
          text: { preview_url: false, body: "hi with a number" },
        }),
        expect.objectContaining({ recipient: "BR.1502576394655843" }),
      ]),
    );
    for (const reply of replies) expect("to" in reply && "recipient" in reply).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(graph.requests).toHaveLength(3);

    const stored = await rows("whatsapp");
    const byId = Object.fromEntries(stored.map((row) => [row.message_id, row]));
    expect(byId["wamid.username"]).toMatchObject({ sender: bsuid, status: "done" });
    // Recorded as notices: never handed to a worker, never answered.
    expect(byId["wamid.system-number"]).toMatchObject({
      sender: "16505551234",
      status: "notice",
      attempts: 0,
    });
    expect(byId["wamid.system-user-id"]).toMatchObject({
      sender: "BR.9990001112",
      status: "notice",
      attempts: 0,
    });
    expect(byId["wamid.renamed"]).toMatchObject({
      status: "rejected",
      last_error: expect.stringMatching(/messages\.0: no sender/),
      // Kept as sent, so it can be recovered.
      message: { raw: renamed },
    });
    const retyped = stored.find((row) => row.message_id.startsWith("content:sha256:"));
    expect(retyped).toMatchObject({
      status: "rejected",
      last_error: expect.stringMatching(/messages\.1\.id: /),
    });
    expect(logs()).toMatch(/channel: 'whatsapp'/);
  });

  it("refuses with 400 only a body that is not the channel's envelope", async () => {
    for (const body of [{ object: "whatsapp_business_account", entry: {} }, [deliveryOf()], "text"]) {
      const response = await postWhatsApp(body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error_code: "BAD_REQUEST" });
    }
    const slackBody = JSON.stringify({ type: 7 });
    const slackResponse = await fetch(`${served.url}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/json", ...slackSignatureHeaders(slackBody, SIGNING_SECRET) },
      body: slackBody,
    });
    expect(slackResponse.status).toBe(400);
    const telegramResponse = await fetch(`${served.url}/telegram/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": TELEGRAM_SECRET },
      body: "[]",
    });
    expect(telegramResponse.status).toBe(400);
    expect(await rows("whatsapp")).toEqual([]);
  });

  it("Slack: a malformed event is stored as rejected and acknowledged; the next event is answered", async () => {
    const post = (event: object, eventId: string) => {
      const raw = JSON.stringify({ type: "event_callback", team_id: "T1", event_id: eventId, event });
      return fetch(`${served.url}/slack/events`, {
        method: "POST",
        headers: { "content-type": "application/json", ...slackSignatureHeaders(raw, SIGNING_SECRET) },
        body: raw,
      });
    };
    // The sender renamed into an object, and a text retyped.
    const bad = await post(
      { type: "app_mention", user: { id: "U1" }, channel: "C1", ts: "1.1", text: "x" },
      "Ev1",
    );
    expect(bad.status).toBe(200);
    expect(await bad.json()).toEqual({ status: "accepted", received: 0, duplicates: 0, rejected: 1 });
    const good = await post(
      { type: "message", channel_type: "im", channel: "D1", user: "U2", ts: "2.2", text: "hi" },
      "Ev2",
    );
    expect(await good.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    await waitFor("the Slack reply", () => slackApi.accepted().length === 1);
    expect(slackApi.accepted()[0]?.body).toMatchObject({ channel: "D1", text: "hi" });
    expect(await rows("slack")).toEqual([
      expect.objectContaining({
        message_id: "Ev1",
        status: "rejected",
        last_error: expect.stringMatching(/event\.user/),
      }),
      expect.objectContaining({ message_id: "Ev2" }),
    ]);
  });

  it("Telegram: a malformed update is stored as rejected and acknowledged; the next update is answered", async () => {
    const post = (update: object) =>
      fetch(`${served.url}/telegram/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": TELEGRAM_SECRET },
        body: JSON.stringify(update),
      });
    const bad = await post({ update_id: 10, message: { message_id: 1, from: { id: 5 }, text: "no chat" } });
    expect(bad.status).toBe(200);
    expect(await bad.json()).toEqual({ status: "accepted", received: 0, duplicates: 0, rejected: 1 });
    const good = await post({
      update_id: 11,
      message: { message_id: 2, chat: { id: 77 }, from: { id: 5 }, text: "hi" },
    });
    expect(await good.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    await waitFor("the Telegram reply", () => telegramApi.accepted().length === 1);
    expect(telegramApi.accepted()[0]?.body).toMatchObject({ chat_id: "77", text: "hi" });
    expect(await rows("telegram")).toEqual([
      expect.objectContaining({
        message_id: "4242:10",
        status: "rejected",
        last_error: expect.stringMatching(/message\.chat/),
      }),
      expect.objectContaining({ message_id: "4242:11" }),
    ]);
  });
});
