import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BACKENDS } from "../databases.js";
import { signToken } from "../helpers.js";
import { startTelegramStub, type TelegramStub, waitFor } from "./support/graph-stub.js";
import { type MessagingTestServer, startMessagingServer } from "./support/server.js";
import { BOT_ID, postTelegram, TELEGRAM_TOKEN, telegramEnv, textUpdate } from "./support/telegram.js";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)("Telegram Bot API webhook on %s", (backend) => {
  let api: TelegramStub;
  let server: MessagingTestServer;

  beforeAll(async () => {
    api = await startTelegramStub();
    server = await startMessagingServer(backend, telegramEnv(api.url));
  });
  afterAll(async () => {
    await server?.stop();
    await api?.close();
  });
  beforeEach(() => {
    api.answer = () => 200;
  });

  const to = (chat: number) => api.requests.filter((r) => String(r.body.chat_id) === String(chat));

  it.each([
    ["missing", null],
    ["wrong", "not-the-secret"],
    ["a prefix of the right one", "test-secret"],
  ] as const)("refuses a %s secret token with 403 and stores nothing", async (_, secret) => {
    const response = await postTelegram(server.url, textUpdate(1, 9001, "let me in"), { secret });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ detail: "Invalid signature", error_code: "FORBIDDEN" });
    expect(await server.inboxIds()).not.toContain(`${BOT_ID}:1`);
  });

  it("has no handshake: GET on the webhook is not a route", async () => {
    const response = await fetch(`${server.url}/telegram/webhook`);
    expect(response.status).toBe(404);
  });

  it("is 400 for invalid JSON behind the right secret, 413 over 1 MiB", async () => {
    const invalid = await postTelegram(server.url, "{nope");
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ detail: "Body is not valid JSON", error_code: "BAD_REQUEST" });
    expect((await postTelegram(server.url, JSON.stringify({ pad: "x".repeat(1024 * 1024) }))).status).toBe(
      413,
    );
  });

  it("answers a text message once in its chat, through the bot's URL", async () => {
    const response = await postTelegram(server.url, textUpdate(100, 9100, "hello telegram"));
    expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    await waitFor("the reply", () => to(9100).length === 1);
    const [reply] = to(9100);
    expect(reply?.path).toBe(`/bot${TELEGRAM_TOKEN}/sendMessage`);
    expect(reply?.body).toEqual({ chat_id: "9100", text: "hello telegram" });
    expect(await server.inboxIds()).toContain(`${BOT_ID}:100`);
  });

  it("answers a caption like a text", async () => {
    const update = textUpdate(101, 9101, "");
    const { text: _text, ...photo } = update.message;
    await postTelegram(server.url, {
      ...update,
      message: { ...photo, photo: [{ file_id: "f" }], caption: "look" },
    });
    await waitFor("the reply", () => to(9101).length === 1);
    expect(to(9101)[0]?.body.text).toBe("look");
  });

  it("stores the same update delivered three times once and answers once", async () => {
    const update = textUpdate(102, 9102, "only once");
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await (await postTelegram(server.url, update)).json());
    expect(answers).toEqual([
      { status: "accepted", received: 1, duplicates: 0 },
      { status: "accepted", received: 0, duplicates: 1 },
      { status: "accepted", received: 0, duplicates: 1 },
    ]);
    await waitFor("the reply", () => to(9102).length === 1);
    await pause(300);
    expect(to(9102)).toHaveLength(1);
  });

  it.each([
    ["a bot's message", textUpdate(103, 9103, "beep", { is_bot: true })],
    ["an edit", { update_id: 104, edited_message: textUpdate(104, 9104, "changed").message }],
    [
      "a message without text",
      { update_id: 105, message: { ...textUpdate(105, 9105, "").message, text: undefined } },
    ],
  ])("acknowledges %s and does not answer it", async (_, update) => {
    const response = await postTelegram(server.url, update);
    expect(await response.json()).toEqual({ status: "ignored" });
    await pause(200);
    expect(
      api.requests.filter((r) => ["9103", "9104", "9105"].includes(String(r.body.chat_id))),
    ).toHaveLength(0);
  });

  it("honours parameters.retry_after of a 429", async () => {
    api.answer = (request) => (String(request.body.chat_id) === "9106" && to(9106).length === 0 ? 429 : 200);
    await postTelegram(server.url, textUpdate(106, 9106, "slow down"));
    await waitFor("the reply after the rate limit", () => to(9106).some((r) => r.delivered), 20_000);
    const [first, second] = to(9106).map((r) => r.at);
    // The stand-in says retry_after: 1; the backoff alone would be at most 200 ms here.
    expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it.each([
    [400, "Stub error 400", 9107],
    [403, "bot was blocked by the user", 9108],
  ])("fails the row at once on %i, listed with a JWT", async (status, error, chat) => {
    api.answer = (request) => (String(request.body.chat_id) === String(chat) ? status : 200);
    await postTelegram(server.url, textUpdate(chat, chat, "anyone?"));
    await waitFor("the failed row", async () =>
      (await server.inbox("failed", "telegram")).some((row) => row.message_id === `${BOT_ID}:${chat}`),
    );
    const [row] = (await server.inbox("failed", "telegram")).filter(
      (r) => r.message_id === `${BOT_ID}:${chat}`,
    );
    expect(row).toMatchObject({ channel: "telegram", status: "failed", attempts: 1 });
    expect(row?.last_error).toContain(error);
    expect(row?.last_error).not.toContain(TELEGRAM_TOKEN);
    expect(to(chat)).toHaveLength(1);
  });

  it("keeps the inbox listing behind config:read", async () => {
    expect((await fetch(`${server.url}/telegram/inbox`)).status).toBe(401);
    const lowScope = await fetch(`${server.url}/telegram/inbox`, {
      headers: { authorization: `Bearer ${await signToken(["agents:read"])}` },
    });
    expect(lowScope.status).toBe(403);
  });

  it("sends 4,096 characters as one message and 4,097 as two numbered parts", async () => {
    await postTelegram(server.url, textUpdate(110, 9110, "a".repeat(4096)));
    await postTelegram(server.url, textUpdate(111, 9111, "b".repeat(4097)));
    await waitFor("three messages", () => to(9110).length === 1 && to(9111).length === 2);
    expect(to(9110)[0]?.body.text).toBe("a".repeat(4096));
    const parts = to(9111).map((r) => r.body.text ?? "");
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4096);
    expect(parts[0]).toMatch(/^\(1\/2\) b+$/);
    expect(parts.map((part) => part.replace(/^\(\d\/2\) /, "")).join("")).toBe("b".repeat(4097));
  });

  it("never logs the bot token or the secret token", async () => {
    expect(server.logs.join("\n")).not.toContain(TELEGRAM_TOKEN.split(":")[1]);
    expect(server.logs.join("\n")).not.toContain("test-secret_token-1");
  });

  it("GET /telegram/status says configured", async () => {
    expect(await (await fetch(`${server.url}/telegram/status`)).json()).toEqual({
      channel: "telegram",
      configured: true,
    });
  });
});
