import { ConfigError } from "@agent-platform/common";
import pino from "pino";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { messagingConfigSchema, wireMessaging } from "../../src/messaging/index.js";
import { startTestServer, type TestServer } from "../helpers.js";
import { TELEGRAM_TOKEN } from "./support/telegram.js";

describe("messaging variables, parsed by the server's one set of rules", () => {
  const parse = (env: Record<string, string>) => messagingConfigSchema.parse(env);

  it("reads on/off like every other boolean", () => {
    expect(parse({ WHATSAPP_SKIP_SIGNATURE_VALIDATION: "on" }).WHATSAPP_SKIP_SIGNATURE_VALIDATION).toBe(true);
    expect(parse({ WHATSAPP_SKIP_SIGNATURE_VALIDATION: "off" }).WHATSAPP_SKIP_SIGNATURE_VALIDATION).toBe(
      false,
    );
  });

  it("takes an empty number as unset (the default), never as 0", () => {
    expect(parse({ MESSAGING_WORKER_POLL_MS: "" }).MESSAGING_WORKER_POLL_MS).toBe(1_000);
    expect(parse({ MESSAGING_WORKER_POLL_MS: " " }).MESSAGING_WORKER_POLL_MS).toBe(1_000);
  });

  it.each(["1e3", "0x10", "-1", "1.5", "5"])(
    "refuses %s for the poll interval, naming the variable",
    (value) => {
      expect(() => loadConfig({ MESSAGING_WORKER_POLL_MS: value })).toThrow(ConfigError);
      expect(() => loadConfig({ MESSAGING_WORKER_POLL_MS: value })).toThrow(/MESSAGING_WORKER_POLL_MS/);
    },
  );

  it("refuses 1e3 and 0x10 for PORT exactly as for the messaging numbers", () => {
    for (const value of ["1e3", "0x10"]) {
      expect(() => loadConfig({ PORT: value })).toThrow(/PORT: expected a whole number/);
      expect(() => loadConfig({ MESSAGING_MAX_ATTEMPTS: value })).toThrow(
        /MESSAGING_MAX_ATTEMPTS: expected a whole number/,
      );
    }
  });
});

describe("Slack and Telegram configuration", () => {
  const unusedSql = postgres("postgres://127.0.0.1:1/unused", { max: 1 });
  afterAll(() => unusedSql.end());
  const logs: string[] = [];
  const create = (env: Record<string, string>, production = false) =>
    wireMessaging({
      config: messagingConfigSchema.parse(env),
      sql: unusedSql,
      logger: pino({ level: "info" }, { write: (line: string) => logs.push(line) }),
      environment: production ? "production" : "development",
      sharedDatabase: false,
    });

  it("refuses a partial Slack configuration, naming what is missing", async () => {
    await expect(create({ SLACK_BOT_TOKEN: "xoxb-1" })).rejects.toThrow(
      /Slack channel partly configured; also set SLACK_SIGNING_SECRET/,
    );
    await expect(create({ SLACK_SIGNING_SECRET: "s" })).rejects.toBeInstanceOf(ConfigError);
  });

  it("refuses a lease (MESSAGING_VISIBILITY_TIMEOUT_MS) that a send or the agent call could outlast", async () => {
    const slack = { SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s" };
    await expect(create({ ...slack, MESSAGING_VISIBILITY_TIMEOUT_MS: "10000" })).rejects.toThrow(
      /worker\.leaseMs \(10000\) must be longer than the slack channel's apiTimeoutMs \(10000\).*\(set with MESSAGING_VISIBILITY_TIMEOUT_MS, SLACK_API_TIMEOUT_MS\)/,
    );
    const agent = { ...slack, AGENT_URL: "http://127.0.0.1:1/agent", AGENT_TIMEOUT_MS: "60000" };
    await expect(create({ ...agent, MESSAGING_VISIBILITY_TIMEOUT_MS: "30000" })).rejects.toThrow(
      /longer than the agent's timeoutMs \(60000\).*AGENT_TIMEOUT_MS/,
    );
    await expect(create({ ...agent, MESSAGING_VISIBILITY_TIMEOUT_MS: "30000" })).rejects.toBeInstanceOf(
      ConfigError,
    );
    // The echo agent makes no call, and a channel that is not configured sends nothing.
    const wired = await create({
      ...slack,
      AGENT_TIMEOUT_MS: "60000",
      TELEGRAM_API_TIMEOUT_MS: "60000",
      MESSAGING_VISIBILITY_TIMEOUT_MS: "10001",
    });
    expect(wired.channels).toEqual(["slack"]);
    await wired.stop();
  });

  it("refuses a Telegram secret token outside 1-256 of A-Z a-z 0-9 _ -, without echoing the bot token", async () => {
    const attempt = create({
      TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      TELEGRAM_WEBHOOK_SECRET_TOKEN: "has space",
    });
    await expect(attempt).rejects.toThrow(/secretToken must be 1-256 characters/);
    await expect(create({ TELEGRAM_BOT_TOKEN: "not-a-token" })).rejects.toThrow(
      /botToken is not of the form/,
    );
    await expect(create({ TELEGRAM_BOT_TOKEN: "not-a-token" })).rejects.not.toThrow(/not-a-token/);
  });

  it("refuses Telegram without a secret token in production, and warns outside it", async () => {
    await expect(create({ TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN }, true)).rejects.toThrow(
      /telegram allowUnauthenticated: true is refused in production.*\(set with TELEGRAM_WEBHOOK_SECRET_TOKEN\)/,
    );
    logs.length = 0;
    const messaging = await create({ TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN });
    await messaging.stop();
    expect(logs.join("\n")).toMatch(/allowUnauthenticated: true: webhook requests are NOT authenticated/);
    expect(logs.join("\n")).not.toContain(TELEGRAM_TOKEN.split(":")[1]);
  });
});

describe("the reference server with no channel configured", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.cleanup());

  it.each([
    ["slack", "/slack/events"],
    ["telegram", "/telegram/webhook"],
  ])(
    "says %s is not configured, has no webhook, and lists its routes in /openapi.json",
    async (channel, webhook) => {
      expect(await (await fetch(`${server.url}/${channel}/status`)).json()).toEqual({
        channel,
        configured: false,
      });
      expect((await fetch(`${server.url}${webhook}`, { method: "POST", body: "{}" })).status).toBe(404);
      // Not excluded from JWT: without a token the listing is 401, whether the channel is configured or not.
      expect((await fetch(`${server.url}/${channel}/inbox`)).status).toBe(401);
      const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
        paths: Record<string, unknown>;
      };
      expect(Object.keys(document.paths)).toContain(`/${channel}/status`);
    },
  );
});
