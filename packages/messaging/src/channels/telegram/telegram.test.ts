import { startStubServer } from "@agent-platform/test-support/stub-server";
import { describe, expect, it } from "vitest";
import { DeliveryError, InvalidPayloadError } from "../../errors.js";
import { createTelegramChannel } from "./channel.js";
import { parseTelegramUpdate } from "./parse.js";

const TOKEN = "123:secret-part";

describe("Telegram updates", () => {
  it("keys a text message by <bot>:<update_id> and replies to its chat", () => {
    const parsed = parseTelegramUpdate(
      {
        update_id: 7,
        message: { message_id: 1, chat: { id: -100 }, from: { id: 5, is_bot: false }, text: "hi" },
      },
      "123",
    );
    expect(parsed).toMatchObject({
      kind: "events",
      messages: [{ id: "123:7", accountId: "123", from: "5", conversation: "-100", text: "hi" }],
    });
  });

  it("returns an update that fails its schema as invalid, keyed by its update_id when it has one", () => {
    expect(parseTelegramUpdate({ update_id: "7" }, "123")).toEqual({
      kind: "events",
      messages: [],
      invalid: [
        {
          id: undefined,
          accountId: "123",
          reason: expect.stringMatching(/^Telegram update at update_id: /),
          raw: { update_id: "7" },
        },
      ],
      statuses: 0,
    });
    const noChat = { update_id: 8, message: { message_id: 1, from: { id: 5 }, text: "hi" } };
    expect(parseTelegramUpdate(noChat, "123")).toMatchObject({
      messages: [],
      invalid: [{ id: "123:8", reason: expect.stringMatching(/message\.chat/), raw: noChat }],
    });
  });

  it.each([[null], [[]], ["text"], [42]])("refuses a body that is not an object: %j", (body) => {
    expect(() => parseTelegramUpdate(body, "123")).toThrow(InvalidPayloadError);
  });
});

describe("Telegram sendMessage", () => {
  it("keeps the bot token out of the error of a refused or unreachable call", async () => {
    const server = await startStubServer({
      status: 403,
      body: '{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}',
    });
    const base = server.url;
    const send = (apiBaseUrl: string) =>
      createTelegramChannel({ botToken: TOKEN, secretToken: "s", apiBaseUrl, apiTimeoutMs: 2_000 })
        .send({ accountId: "123", to: "1", text: "x" })
        .catch((error: unknown) => error as DeliveryError);
    try {
      const refused = await send(base);
      expect(refused).toMatchObject({
        retryable: false,
        message: "Telegram Bot API answered 403: Forbidden: bot was blocked by the user",
      });
      const unreachable = await send("http://127.0.0.1:9");
      expect(unreachable).toBeInstanceOf(DeliveryError);
      expect(unreachable).toMatchObject({ retryable: true });
      expect(String((unreachable as DeliveryError).message)).not.toContain("secret-part");
    } finally {
      await server.close();
    }
  });

  it.each([
    [3, 3_000],
    [1e12, 24 * 60 * 60 * 1000],
    [-1, undefined],
    ["60", undefined],
  ])(
    "takes a 429's parameters.retry_after of %j as a wait of %j ms, at most a day",
    async (retryAfter, expected) => {
      const server = await startStubServer({
        status: 429,
        body: JSON.stringify({
          ok: false,
          error_code: 429,
          description: "Too Many Requests",
          parameters: { retry_after: retryAfter },
        }),
      });
      try {
        const error = await createTelegramChannel({
          botToken: TOKEN,
          secretToken: "s",
          apiBaseUrl: server.url,
          apiTimeoutMs: 2_000,
        })
          .send({ accountId: "123", to: "1", text: "x" })
          .catch((caught: unknown) => caught as DeliveryError);
        expect(error).toBeInstanceOf(DeliveryError);
        expect(error).toMatchObject({ retryable: true, retryAfterMs: expected });
      } finally {
        await server.close();
      }
    },
  );
});
