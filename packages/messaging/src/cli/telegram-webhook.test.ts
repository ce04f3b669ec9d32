import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type StubServer, startStubServer } from "@agent-platform/test-support/stub-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CliResult, telegramWebhookCommand } from "./telegram-webhook.js";

const TOKEN = "123456:bot-token-secret-part";
const SECRET = "webhook_secret-1";

/** A stand-in Bot API on 127.0.0.1: records each call, answers as Telegram does (or as a test says). */
describe("platform-telegram-webhook", () => {
  let server: StubServer;
  let apiBaseUrl: string;
  let calls: { path: string | undefined; body: unknown }[];
  let answer: { status: number; body: unknown };

  beforeAll(async () => {
    server = await startStubServer((request) => {
      calls.push({ path: request.url, body: JSON.parse(request.body) });
      return answer;
    });
    apiBaseUrl = `${server.url}/`;
  });
  afterAll(() => server.close());
  beforeEach(() => {
    calls = [];
    answer = { status: 200, body: { ok: true, result: true, description: "Webhook was set" } };
  });

  const env = (extra: Record<string, string | undefined> = {}) => ({
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_WEBHOOK_SECRET_TOKEN: SECRET,
    TELEGRAM_API_BASE_URL: apiBaseUrl,
    ...extra,
  });
  const expectNoToken = (result: CliResult) => {
    expect(result.stdout).not.toContain("bot-token-secret-part");
    expect(result.stderr).not.toContain("bot-token-secret-part");
  };

  it("set registers the URL and the secret token for message updates, and prints Telegram's answer", async () => {
    const url = "https://example.test/telegram/webhook";
    const result = await telegramWebhookCommand(["set", "--url", url, "--drop-pending-updates"], env());
    expect(result).toEqual({
      exitCode: 0,
      stdout: '{"ok":true,"result":true,"description":"Webhook was set"}\n',
      stderr: "",
    });
    expect(calls).toEqual([
      {
        path: `/bot${TOKEN}/setWebhook`,
        body: { url, secret_token: SECRET, allowed_updates: ["message"], drop_pending_updates: true },
      },
    ]);
  });

  it("info calls getWebhookInfo and needs no secret token", async () => {
    answer = { status: 200, body: { ok: true, result: { url: "https://example.test/telegram/webhook" } } };
    const result = await telegramWebhookCommand(["info"], env({ TELEGRAM_WEBHOOK_SECRET_TOKEN: undefined }));
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(answer.body);
    expect(calls).toEqual([{ path: `/bot${TOKEN}/getWebhookInfo`, body: {} }]);
  });

  it("reports a refusal with Telegram's description and exit code 1, without the token", async () => {
    answer = { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } };
    const result = await telegramWebhookCommand(["set", "--url", "https://example.test/t"], env());
    expect(result).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: "Telegram Bot API answered 401 to setWebhook: Unauthorized\n",
    });
  });

  it("reports an unreachable API without the token in the message", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await telegramWebhookCommand(
      ["set", "--url", "https://example.test/t"],
      env({ TELEGRAM_API_BASE_URL: `http://127.0.0.1:${port}` }),
    );
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^Telegram Bot API unreachable/);
    expectNoToken(result);
  });

  it.each([
    ["no command", [], env(), /^Unknown command: \(none\)/],
    ["an unknown command", ["delete"], env(), /^Unknown command: delete/],
    ["an unknown option", ["set", "--ur", "x"], env(), /Unknown option '--ur'/],
    ["set without --url", ["set"], env(), /^--url is required for set/],
    ["an http URL", ["set", "--url", "http://example.test/t"], env(), /must be https/],
    ["a URL that is none", ["set", "--url", "not a url"], env(), /is not a URL/],
    ["an oversized URL", ["set", "--url", `https://e.test/${"a".repeat(2048)}`], env(), /longer than 2048/],
    ["info with options", ["info", "--url", "https://e.test/t"], env(), /info takes no options/],
    ["no bot token", ["info"], env({ TELEGRAM_BOT_TOKEN: undefined }), /botToken is not of the form/],
    ["a malformed bot token", ["info"], env({ TELEGRAM_BOT_TOKEN: "abc" }), /botToken is not of the form/],
    [
      "set without a secret token",
      ["set", "--url", "https://e.test/t"],
      env({ TELEGRAM_WEBHOOK_SECRET_TOKEN: "" }),
      /^TELEGRAM_WEBHOOK_SECRET_TOKEN is required for set/,
    ],
    [
      "a secret token Telegram refuses",
      ["set", "--url", "https://e.test/t"],
      env({ TELEGRAM_WEBHOOK_SECRET_TOKEN: "has spaces" }),
      /secretToken must be 1-256 characters/,
    ],
  ])("refuses %s before calling Telegram, with exit code 1", async (_, args, environment, message) => {
    const result = await telegramWebhookCommand(args, environment);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(message);
    expectNoToken(result);
    expect(calls).toEqual([]);
  });
});
