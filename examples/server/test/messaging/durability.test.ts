import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_DATABASE_URL } from "../databases.js";
import { type ChildServer, spawnServer } from "./support/child-server.js";
import { type ApiStub, startSlackStub, startTelegramStub, waitFor } from "./support/graph-stub.js";
import { directMessage, postSlack, slackEnv } from "./support/slack.js";
import { postTelegram, telegramEnv, textUpdate } from "./support/telegram.js";

/** What the durability tests need of a channel: its stand-in API, its env, and message `i` posted to it. */
interface Driver {
  name: string;
  startStub(): Promise<ApiStub<{ channel?: string; chat_id?: string | number; text?: string }>>;
  env(apiUrl: string, extra?: Record<string, string>): Record<string, string>;
  post(baseUrl: string, i: number, text: string): Promise<Response>;
  /** `<conversation>:<text>` of a reply, to check which message it answered. */
  reply(body: { channel?: string; chat_id?: string | number; text?: string }): string;
  conversation(i: number): string;
}

const drivers: Driver[] = [
  {
    name: "Slack",
    startStub: startSlackStub,
    env: slackEnv,
    post: (url, i, text) => postSlack(url, directMessage(`Ev0LOAD${i}`, `D${i}`, text)),
    reply: (body) => `${body.channel}:${body.text}`,
    conversation: (i) => `D${i}`,
  },
  {
    name: "Telegram",
    startStub: startTelegramStub,
    env: telegramEnv,
    post: (url, i, text) => postTelegram(url, textUpdate(5000 + i, 800_000 + i, text)),
    reply: (body) => `${body.chat_id}:${body.text}`,
    conversation: (i) => String(800_000 + i),
  },
];

const MESSAGES = 200;

// Child processes share the database, so this needs real PostgreSQL (PGlite is one process's file).
describe.skipIf(!TEST_DATABASE_URL).each(drivers)("$name inbox across processes (PostgreSQL)", (driver) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups.length = 0;
  });

  async function setup() {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const api = await driver.startStub();
    cleanups.push(() => api.close());
    const spawn = async (extra: Record<string, string> = {}) => {
      const server = await spawnServer({ DATABASE_URL: database.url, ...driver.env(api.url, extra) });
      cleanups.unshift(() => server.kill("SIGKILL"));
      return server;
    };
    return { api, spawn };
  }

  it("answers a message acknowledged just before a SIGKILL exactly once after the restart", async () => {
    const { api, spawn } = await setup();
    // The worker of the first process never starts: it dies holding an acknowledged, unprocessed message.
    const first: ChildServer = await spawn({ MESSAGING_WORKER_START_DELAY_MS: "3600000" });
    const response = await driver.post(first.url, 1, "are you there?");
    expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    await first.kill("SIGKILL");
    expect(first.child.signalCode).toBe("SIGKILL");
    expect(api.requests).toHaveLength(0);

    const second = await spawn();
    await waitFor("the reply after the restart", () => api.accepted().length === 1);
    const again = await driver.post(second.url, 1, "are you there?");
    expect(await again.json()).toEqual({ status: "accepted", received: 0, duplicates: 1 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(api.requests.map((r) => driver.reply(r.body))).toEqual([
      `${driver.conversation(1)}:are you there?`,
    ]);
  });

  it(`two processes answer each of ${MESSAGES} messages exactly once, also when both get a delivery`, async () => {
    const { api, spawn } = await setup();
    const servers = await Promise.all([spawn(), spawn()]);
    // Every message goes to one process; every third one is delivered to the other as well.
    const results = await Promise.all(
      Array.from({ length: MESSAGES }, (_, i) => {
        const posts = [driver.post((servers[i % 2] as ChildServer).url, i, `message ${i}`)];
        if (i % 3 === 0)
          posts.push(driver.post((servers[(i + 1) % 2] as ChildServer).url, i, `message ${i}`));
        return posts.map(
          async (post) => (await post).json() as Promise<{ received: number; duplicates: number }>,
        );
      }).flat(),
    );
    expect(results.reduce((sum, result) => sum + result.received, 0)).toBe(MESSAGES);
    expect(results.reduce((sum, result) => sum + result.duplicates, 0)).toBe(Math.ceil(MESSAGES / 3));
    await waitFor(`${MESSAGES} replies`, () => api.accepted().length >= MESSAGES, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const replies = api.requests.map((r) => driver.reply(r.body));
    expect(replies).toHaveLength(MESSAGES);
    expect(new Set(replies)).toEqual(
      new Set(Array.from({ length: MESSAGES }, (_, i) => `${driver.conversation(i)}:message ${i}`)),
    );
  }, 120_000); // 267 single-message deliveries and two child processes on a shared, busy machine
});
