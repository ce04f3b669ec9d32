import { isConfigError } from "@agent-platform/common";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { levelsOnlyLogger } from "../../common/test/plain-loggers.js";
import { createHttpAgent } from "./agents/http.js";
import { slack } from "./channels/slack/index.js";
import { telegram } from "./channels/telegram/index.js";
import { whatsapp } from "./channels/whatsapp/index.js";
import { createMessaging, type MessagingOptions, type RetentionOptions } from "./messaging.js";

// Never connects: every configuration here is refused before the database is touched, or has no channel.
const sql = postgres("postgres://127.0.0.1:1/unused", { max: 1 });
afterAll(() => sql.end());

const WHATSAPP = { appSecret: "s", accessToken: "a", phoneNumberId: "1" };
const TELEGRAM_TOKEN = "123:secret-part";

function refusal(run: () => unknown): {
  option: string | undefined;
  message: string;
  problems: readonly string[];
} {
  try {
    run();
  } catch (error) {
    if (!isConfigError(error)) throw error;
    expect(error.component).toBe("messaging");
    return { option: error.option, message: error.message, problems: error.problems };
  }
  throw new Error("expected a ConfigError");
}

async function refusalOf(options: Partial<MessagingOptions>) {
  const error = await createMessaging({ sql, channels: [], ...options } as MessagingOptions).then(
    () => {
      throw new Error("expected a ConfigError");
    },
    (failure: unknown) => failure,
  );
  if (!isConfigError(error)) throw error;
  return { option: error.option, message: error.message, problems: error.problems };
}

describe("createMessaging checks every option in one place", () => {
  it.each([
    ["worker.concurrency", { worker: { concurrency: 0 } }],
    ["worker.concurrency", { worker: { concurrency: 1.5 } }],
    ["worker.concurrency", { worker: { concurrency: Number.NaN } }],
    ["worker.concurrency", { worker: { concurrency: "4" } }],
    ["worker.pollMs", { worker: { pollMs: 0 } }],
    ["worker.pollMs", { worker: { pollMs: 2 ** 31 } }],
    ["worker.startDelayMs", { worker: { startDelayMs: -1 } }],
    ["worker.maxAttempts", { worker: { maxAttempts: 0 } }],
    ["worker.retryBaseMs", { worker: { retryBaseMs: Number.POSITIVE_INFINITY } }],
    ["worker.retryMaxMs", { worker: { retryBaseMs: 5_000, retryMaxMs: 1_000 } }],
    ["worker.leaseMs", { worker: { leaseMs: 999 } }],
    ["worker.leseMs", { worker: { leseMs: 60_000 } }],
    ["commit.maxBatch", { commit: { maxBatch: 0 } }],
    ["commit.maxWaitMs", { commit: { maxWaitMs: 0 } }],
    ["commit.timeoutMs", { commit: { timeoutMs: 0 } }],
    ["commit.timeoutMs", { commit: { timeoutMs: 60_001 } }],
    ["workers", { workers: { concurrency: 2 } }],
    ["listen", { listen: "yes" }],
    ["environment", { environment: "prod" }],
    ["agent", { agent: "http://agent" }],
    ["sql", { sql: undefined }],
    ["channels", { channels: undefined }],
    ["channels[0]", { channels: [{}] }],
    ["worker", { worker: 5 }],
  ])("refuses %s, naming it", async (option, options) => {
    const refused = await refusalOf(options as Partial<MessagingOptions>);
    expect(refused.option).toBe(option);
    expect(refused.message).toContain(option);
  });

  it("names every problem at once, and no single option when several are at fault", async () => {
    const refused = await refusalOf({ worker: { concurrency: 0, pollMs: 1 }, commit: { maxBatch: -1 } });
    expect(refused.option).toBeUndefined();
    expect(refused.problems).toEqual([
      expect.stringMatching(/^worker\.concurrency must be a whole number from 1 to 1024; got 0$/),
      expect.stringMatching(/^worker\.pollMs /),
      expect.stringMatching(/^commit\.maxBatch /),
    ]);
  });

  it("refuses a lease that a send or the agent call could outlast", async () => {
    const slow = whatsapp({ ...WHATSAPP, apiTimeoutMs: 60_000 });
    const bySend = await refusalOf({ channels: [slow], worker: { leaseMs: 60_000 } });
    expect(bySend.option).toBe("worker.leaseMs");
    expect(bySend.message).toMatch(
      /\(60000\) must be longer than the whatsapp channel's apiTimeoutMs \(60000\)/,
    );
    const agent = createHttpAgent("http://127.0.0.1:1/agent", 30_000);
    const byAgent = await refusalOf({ agent, worker: { leaseMs: 30_000 } });
    expect(byAgent.message).toMatch(/must be longer than the agent's timeoutMs \(30000\)/);
    // One millisecond more is enough, and without channels nothing is started.
    const messaging = await createMessaging({ sql, channels: [], agent, worker: { leaseMs: 30_001 } });
    await messaging.stop();
  });

  it("refuses an unauthenticated channel in production (the default), and warns outside it", async () => {
    const unsigned = whatsapp({ accessToken: "a", phoneNumberId: "1", skipSignatureValidation: true });
    const open = telegram({ botToken: TELEGRAM_TOKEN, allowUnauthenticated: true });
    for (const environment of [undefined, "production"] as const) {
      const refused = await refusalOf({ channels: [unsigned, open], environment });
      expect(refused.problems).toEqual([
        expect.stringMatching(/^whatsapp skipSignatureValidation: true is refused in production/),
        expect.stringMatching(/^telegram allowUnauthenticated: true is refused in production/),
      ]);
    }
    const { logger, calls } = levelsOnlyLogger();
    const pool = postgres("postgres://127.0.0.1:1/unused", { max: 1, connect_timeout: 1 });
    try {
      const messaging = await createMessaging({
        sql: pool,
        channels: [open],
        environment: "development",
        logger,
      });
      await messaging.stop();
    } finally {
      await pool.end({ timeout: 0 });
    }
    expect(calls).toContainEqual({
      level: "warn",
      args: [
        { channel: "telegram" },
        expect.stringMatching(/allowUnauthenticated: true: .*NOT authenticated/),
      ],
    });
    expect(JSON.stringify(calls)).not.toContain("secret-part");
  });
});

describe("createMessaging's retention", () => {
  it("refuses days out of range, naming the option", async () => {
    for (const [retention, option] of [
      [{ doneDays: -1 }, "retention.doneDays"],
      [{ doneDays: 1.5 }, "retention.doneDays"],
      [{ failedDays: 36_501 }, "retention.failedDays"],
      [{ failedDays: "90" }, "retention.failedDays"],
      [{ keepDays: 3 }, "retention.keepDays"],
    ] as const) {
      const refused = await refusalOf({ retention: retention as RetentionOptions });
      expect(refused.option, JSON.stringify(retention)).toBe(option);
    }
    expect((await refusalOf({ worker: { ordering: "fifo" as "none" } })).option).toBe("worker.ordering");
  });

  it("warns when rows would be deleted before a chat product stops redelivering, and not otherwise", async () => {
    for (const [retention, warned] of [
      [{ doneDays: 6 }, ["retention.doneDays"]],
      [{ doneDays: 1, failedDays: 2 }, ["retention.doneDays", "retention.failedDays"]],
      [{ doneDays: 7 }, []],
      [{ doneDays: 0, failedDays: 0 }, []],
      [{}, []],
    ] as const) {
      const { logger, calls } = levelsOnlyLogger();
      const messaging = await createMessaging({ sql, channels: [], logger, retention });
      await messaging.stop();
      const options = calls
        .filter((call) => call.level === "warn")
        .map((call) => (call.args[0] as { option?: string }).option);
      expect(options, JSON.stringify(retention)).toEqual(warned);
    }
  });
});

describe("channel factories check every option", () => {
  it.each([
    ["whatsapp", "accessToken", () => whatsapp({ ...WHATSAPP, accessToken: "" })],
    ["whatsapp", "phoneNumberId", () => whatsapp({ ...WHATSAPP, phoneNumberId: 7 as never })],
    ["whatsapp", "appSecret", () => whatsapp({ accessToken: "a", phoneNumberId: "1" })],
    ["whatsapp", "apiTimeoutMs", () => whatsapp({ ...WHATSAPP, apiTimeoutMs: 0 })],
    ["whatsapp", "apiBaseUrl", () => whatsapp({ ...WHATSAPP, apiBaseUrl: "ftp://graph" })],
    ["whatsapp", "apiBaseUrl", () => whatsapp({ ...WHATSAPP, apiBaseUrl: "https://u:p@graph" })],
    [
      "whatsapp",
      "skipSignatureValidation",
      () => whatsapp({ ...WHATSAPP, skipSignatureValidation: "no" as never }),
    ],
    ["whatsapp", "apiTimeout", () => whatsapp({ ...WHATSAPP, apiTimeout: 5 } as never)],
    ["slack", "signingSecret", () => slack({ signingSecret: "", botToken: "b" })],
    ["slack", "apiTimeoutMs", () => slack({ signingSecret: "s", botToken: "b", apiTimeoutMs: 2 ** 31 })],
    ["telegram", "botToken", () => telegram({ botToken: "not-a-token", secretToken: "ok" })],
    ["telegram", "secretToken", () => telegram({ botToken: TELEGRAM_TOKEN, secretToken: "has space" })],
    ["telegram", "secretToken", () => telegram({ botToken: TELEGRAM_TOKEN })],
    [
      "telegram",
      "apiBaseUrl",
      () => telegram({ botToken: TELEGRAM_TOKEN, secretToken: "s", apiBaseUrl: "x" }),
    ],
    ["createHttpAgent", "timeoutMs", () => createHttpAgent("http://agent", 0)],
    ["createHttpAgent", "url", () => createHttpAgent("file:///etc/passwd", 1_000)],
  ])("%s refuses %s, naming it", (scope, option, run) => {
    const refused = refusal(run);
    expect(refused.option).toBe(option);
    expect(refused.message.startsWith(`${scope}: ${option} `)).toBe(true);
  });

  it("never echoes a secret it refuses", () => {
    const refused = refusal(() => telegram({ botToken: "999:leaked-secret x", secretToken: "also secret!" }));
    expect(JSON.stringify(refused)).not.toMatch(/leaked-secret|also secret/);
  });

  it("tells createMessaging how long a send may take", () => {
    expect(whatsapp({ ...WHATSAPP, apiTimeoutMs: 1_234 }).sendTimeoutMs).toBe(1_234);
    expect(slack({ signingSecret: "s", botToken: "b" }).sendTimeoutMs).toBe(10_000);
    expect(createHttpAgent("http://agent", 4_321).timeoutMs).toBe(4_321);
  });
});
