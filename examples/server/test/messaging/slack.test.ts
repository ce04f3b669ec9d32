import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BACKENDS } from "../databases.js";
import { signToken } from "../helpers.js";
import { type SlackStub, startSlackStub, waitFor } from "./support/graph-stub.js";
import { type MessagingTestServer, startMessagingServer } from "./support/server.js";
import { BOT_TOKEN, directMessage, mention, postSlack, slackEnv, slackEvent } from "./support/slack.js";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)("Slack Events API on %s", (backend) => {
  let api: SlackStub;
  let server: MessagingTestServer;

  beforeAll(async () => {
    api = await startSlackStub();
    server = await startMessagingServer(backend, slackEnv(api.url));
  });
  afterAll(async () => {
    await server?.stop();
    await api?.close();
  });
  beforeEach(() => {
    api.answer = () => 200;
  });

  const to = (channel: string) => api.requests.filter((r) => r.body.channel === channel);

  describe("authentication", () => {
    const body = directMessage("Ev0AUTH", "D0AUTH", "who goes there");
    const seconds = () => Math.floor(Date.now() / 1000);
    const forged = (signature: string) => ({
      headers: { "x-slack-request-timestamp": String(seconds()), "x-slack-signature": signature },
    });

    it.each([
      ["missing", () => ({ headers: null })],
      ["wrong", () => forged(`v0=${"0".repeat(64)}`)],
      ["made with another secret", () => ({ secret: "another-secret" })],
      ["older than 5 minutes", () => ({ timestamp: seconds() - 330 })],
      ["more than 5 minutes ahead", () => ({ timestamp: seconds() + 330 })],
      ["unprefixed", () => forged("0".repeat(64))],
    ] as const)("refuses a %s signature with 403 and stores nothing", async (_, options) => {
      const response = await postSlack(server.url, body, options());
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ detail: "Invalid signature", error_code: "FORBIDDEN" });
      expect(await server.inboxIds()).not.toContain("Ev0AUTH");
    });

    it("accepts a valid signature of a timestamp within 5 minutes", async () => {
      const response = await postSlack(server.url, body, { timestamp: seconds() - 240 });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    });
  });

  it("answers url_verification with its challenge, after checking the signature", async () => {
    const handshake = {
      token: "x",
      challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
      type: "url_verification",
    };
    const response = await postSlack(server.url, handshake);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(handshake.challenge);
    expect((await postSlack(server.url, handshake, { secret: "wrong" })).status).toBe(403);
  });

  it("is 400 for invalid JSON behind a valid signature, 413 over 1 MiB", async () => {
    const invalid = await postSlack(server.url, "{nope");
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ detail: "Body is not valid JSON", error_code: "BAD_REQUEST" });
    const big = await postSlack(
      server.url,
      JSON.stringify({ type: "event_callback", pad: "x".repeat(1024 * 1024) }),
    );
    expect(big.status).toBe(413);
  });

  it("answers a direct message once, in the DM, with the bot token", async () => {
    const response = await postSlack(server.url, directMessage("Ev0DM", "D0DM", "hello slack"));
    expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    await waitFor("the reply", () => to("D0DM").length === 1);
    const [reply] = to("D0DM");
    expect(reply?.path).toBe("/chat.postMessage");
    expect(reply?.authorization).toBe(`Bearer ${BOT_TOKEN}`);
    expect(reply?.body).toEqual({ channel: "D0DM", text: "hello slack" });
  });

  it("answers a mention in a channel in the mention's thread", async () => {
    await postSlack(server.url, mention("Ev0MENTION", "C0CHAN", "<@U0BOT> hi", "1700000001.000200"));
    await waitFor("the reply", () => to("C0CHAN").length === 1);
    expect(to("C0CHAN")[0]?.body).toEqual({
      channel: "C0CHAN",
      text: "<@U0BOT> hi",
      thread_ts: "1700000001.000200",
    });
  });

  it("stores Slack's retries of one event once and answers once", async () => {
    const event = directMessage("Ev0RETRY", "D0RETRY", "only once");
    const answers = [];
    for (const retry of [undefined, 1, 2])
      answers.push(await (await postSlack(server.url, event, { retry })).json());
    expect(answers).toEqual([
      { status: "accepted", received: 1, duplicates: 0 },
      { status: "accepted", received: 0, duplicates: 1 },
      { status: "accepted", received: 0, duplicates: 1 },
    ]);
    await waitFor("the reply", () => to("D0RETRY").length === 1);
    await pause(300);
    expect(to("D0RETRY")).toHaveLength(1);
  });

  it.each([
    ["a bot's message", 1, { bot_id: "B0OTHER" }],
    ["the app's own reply", 2, { bot_id: "B0SELF", subtype: "bot_message" }],
    ["an edit", 3, { subtype: "message_changed" }],
    ["a deletion", 4, { subtype: "message_deleted" }],
  ])("acknowledges %s and does not answer it", async (_, n, extra) => {
    const response = await postSlack(server.url, directMessage(`Ev0BOT${n}`, `D0BOT${n}`, "beep", extra));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ignored" });
    expect(await server.inboxIds()).not.toContain(`Ev0BOT${n}`);
    await pause(200);
    expect(to(`D0BOT${n}`)).toHaveLength(0);
  });

  it("ignores other event types and messages in public channels that do not mention the app", async () => {
    const reaction = slackEvent("Ev0REACT", { type: "reaction_added", user: "U0PERSON", reaction: "+1" });
    expect(await (await postSlack(server.url, reaction)).json()).toEqual({ status: "ignored" });
    const chatter = slackEvent("Ev0CHAT", {
      type: "message",
      channel_type: "channel",
      channel: "C0X",
      user: "U1",
      text: "hi",
    });
    expect(await (await postSlack(server.url, chatter)).json()).toEqual({ status: "ignored" });
  });

  it("honours Retry-After on HTTP 429 and on ok:false ratelimited", async () => {
    api.answer = (request) => {
      if (request.body.channel !== "D0RATE") return 200;
      const earlier = to("D0RATE").length;
      if (earlier === 0) return { status: 429, headers: { "retry-after": "1" } };
      if (earlier === 1) {
        return { status: 200, body: { ok: false, error: "ratelimited" }, headers: { "retry-after": "1" } };
      }
      return 200;
    };
    await postSlack(server.url, directMessage("Ev0RATE", "D0RATE", "slow down"));
    await waitFor("the reply after two rate limits", () => to("D0RATE").some((r) => r.delivered), 20_000);
    const times = to("D0RATE").map((r) => r.at);
    expect(times).toHaveLength(3);
    // The retry backoff alone is at most 200 ms here; only the hint makes the worker wait a second.
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(950);
    expect((times[2] ?? 0) - (times[1] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("fails the row with Slack's error string on a permanent error, listed with a JWT", async () => {
    api.answer = (request) =>
      request.body.channel === "D0GONE"
        ? { status: 200, body: { ok: false, error: "channel_not_found" } }
        : 200;
    await postSlack(server.url, directMessage("Ev0GONE", "D0GONE", "anyone?"));
    await waitFor("the failed row", async () =>
      (await server.inbox("failed", "slack")).some((row) => row.message_id === "Ev0GONE"),
    );
    const [row] = (await server.inbox("failed", "slack")).filter((r) => r.message_id === "Ev0GONE");
    expect(row).toMatchObject({ channel: "slack", status: "failed", attempts: 1 });
    expect(row?.last_error).toContain("channel_not_found");
    expect(to("D0GONE")).toHaveLength(1);
    const unauthenticated = await fetch(`${server.url}/slack/inbox`);
    expect(unauthenticated.status).toBe(401);
    const lowScope = await fetch(`${server.url}/slack/inbox`, {
      headers: { authorization: `Bearer ${await signToken(["agents:read"])}` },
    });
    expect(lowScope.status).toBe(403);
  });

  it("sends a reply of 4,000 characters as one message and a longer one as numbered parts", async () => {
    await postSlack(server.url, directMessage("Ev0LIMIT", "D0LIMIT", "a".repeat(4_000)));
    await postSlack(
      server.url,
      directMessage("Ev0OVER", "D0OVER", `${"b".repeat(3_000)}\n\n${"c".repeat(1_000)}`),
    );
    await waitFor("three messages", () => to("D0LIMIT").length === 1 && to("D0OVER").length === 2);
    expect(to("D0LIMIT")[0]?.body.text).toBe("a".repeat(4_000));
    const parts = to("D0OVER").map((r) => r.body.text ?? "");
    // Cut at the paragraph break, numbered, each within the limit.
    expect(parts).toEqual([`(1/2) ${"b".repeat(3_000)}`, `(2/2) ${"c".repeat(1_000)}`]);
  });

  it("GET /slack/status says configured", async () => {
    expect(await (await fetch(`${server.url}/slack/status`)).json()).toEqual({
      channel: "slack",
      configured: true,
    });
  });
});
