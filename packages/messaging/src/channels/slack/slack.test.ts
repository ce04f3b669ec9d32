import { slackSignatureHeaders } from "@agent-platform/test-support/webhook-signatures";
import { describe, expect, it } from "vitest";
import { InvalidPayloadError } from "../../errors.js";
import { createSlackChannel } from "./channel.js";
import { parseSlackDelivery } from "./parse.js";
import { isValidSlackSignature } from "./signature.js";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

describe("Slack signature", () => {
  const body = '{"type":"event_callback"}';
  const now = 1_700_000_000;
  const check = (headers: Record<string, string>, at = now) =>
    isValidSlackSignature(new Headers(headers), new TextEncoder().encode(body), SECRET, at * 1000);

  it("accepts v0=HMAC(v0:{timestamp}:{body}) within 5 minutes either way", async () => {
    expect(await check(slackSignatureHeaders(body, SECRET, now))).toBe(true);
    expect(await check(slackSignatureHeaders(body, SECRET, now - 300))).toBe(true);
    expect(await check(slackSignatureHeaders(body, SECRET, now + 300))).toBe(true);
  });

  it("refuses a stale or future timestamp, a changed body, another secret and malformed headers", async () => {
    expect(await check(slackSignatureHeaders(body, SECRET, now - 301))).toBe(false);
    expect(await check(slackSignatureHeaders(body, SECRET, now + 301))).toBe(false);
    expect(await check(slackSignatureHeaders(`${body} `, SECRET, now))).toBe(false);
    expect(await check(slackSignatureHeaders(body, "other", now))).toBe(false);
    const good = slackSignatureHeaders(body, SECRET, now);
    expect(await check({ ...good, "x-slack-signature": good["x-slack-signature"].slice(3) })).toBe(false);
    expect(await check({ ...good, "x-slack-signature": good["x-slack-signature"].toUpperCase() })).toBe(
      false,
    );
    expect(await check({ ...good, "x-slack-request-timestamp": "1.7e9" })).toBe(false);
    expect(await check({ "x-slack-signature": good["x-slack-signature"] })).toBe(false);
  });
});

describe("Slack events", () => {
  const callback = (event: object) => ({ type: "event_callback", team_id: "T1", event_id: "Ev1", event });

  it("keys a DM by event_id and replies in the DM; a mention in its thread", () => {
    const dm = parseSlackDelivery(
      callback({ type: "message", channel_type: "im", channel: "D1", user: "U1", text: "hi", ts: "1.1" }),
    );
    expect(dm).toMatchObject({
      kind: "events",
      messages: [{ id: "Ev1", accountId: "T1", from: "U1", conversation: "D1", text: "hi" }],
    });
    expect(dm.kind === "events" && dm.messages[0]?.thread).toBeUndefined();
    const atMention = parseSlackDelivery(
      callback({ type: "app_mention", channel: "C1", user: "U1", text: "yo", ts: "2.2" }),
    );
    expect(atMention).toMatchObject({ messages: [{ conversation: "C1", thread: "2.2" }] });
  });

  it("returns a message callback that fails its schema as invalid, naming the field; refuses a body without a type", () => {
    const withoutId = { type: "event_callback", team_id: "T1", event: { type: "message", user: "U1" } };
    expect(parseSlackDelivery(withoutId)).toEqual({
      kind: "events",
      messages: [],
      invalid: [
        {
          id: undefined,
          accountId: "T1",
          from: "U1",
          type: "message",
          reason: expect.stringMatching(/^Slack event_callback at event_id: /),
          raw: withoutId,
        },
      ],
      statuses: 0,
    });
    // A sender renamed into an object: stored as rejected under its event id, not refused.
    const retyped = callback({ type: "app_mention", user: { id: "U1" }, channel: "C1", ts: "1.1" });
    expect(parseSlackDelivery(retyped)).toMatchObject({
      invalid: [{ id: "Ev1", reason: expect.stringMatching(/event\.user/) }],
    });
    // Events the app does not answer are ignored whatever their fields (team_join's user is an object).
    expect(parseSlackDelivery(callback({ type: "team_join", user: { id: "U1" } }))).toEqual({
      kind: "ignored",
    });
    expect(() => parseSlackDelivery([])).toThrow(InvalidPayloadError);
    expect(() => parseSlackDelivery({ type: 7 })).toThrow(/Invalid Slack request/);
  });

  it("has a session per conversation, and per thread in a thread", () => {
    const channel = createSlackChannel({
      signingSecret: "s",
      botToken: "t",
      apiBaseUrl: "http://x",
      apiTimeoutMs: 1,
      now: Date.now,
    });
    expect(channel.sessionId({ accountId: "T1", from: "U1", conversation: "D1" })).toBe("slack:T1:D1");
    expect(channel.sessionId({ accountId: "T1", from: "U1", conversation: "C1", thread: "2.2" })).toBe(
      "slack:T1:C1:2.2",
    );
  });
});
