import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentMessage } from "@agent-platform/messaging";
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_DATABASE_URL } from "../databases.js";
import { type ChildServer, spawnServer } from "./support/child-server.js";
import { closeServer, readText, startGraphStub, startTelegramStub, waitFor } from "./support/graph-stub.js";
import { postTelegram, telegramEnv, textUpdate } from "./support/telegram.js";
import { channelEnv, delivery, postDelivery } from "./support/whatsapp.js";

const CONVERSATIONS = 12;
const BURST = 3;
const PER_CHAT_MS = 200;
const PER_SECOND = 10;
/** The first message of each burst is answered in this many parts (WhatsApp's 4,096-character limit). */
const PARTS = 3;

const senderOf = (c: number) => `4915551${String(c).padStart(4, "0")}`;

/** What differs between the chat products: the stand-in, the variables, how a burst is delivered, a send's chat. */
interface Product {
  name: string;
  stub(): Promise<{
    url: string;
    requests: { at: number; body: unknown }[];
    accepted(): unknown[];
    close(): Promise<void>;
  }>;
  env(apiUrl: string, extra: Record<string, string>): Record<string, string>;
  /** Delivers conversation `c`'s burst of texts to the server at `url`; resolves to the HTTP statuses. */
  deliver(url: string, c: number, texts: string[]): Promise<number[]>;
  chatOf(body: unknown): string;
}

const PRODUCTS: Product[] = [
  {
    name: "WhatsApp",
    stub: startGraphStub,
    env: (apiUrl, extra) =>
      channelEnv(apiUrl, {
        ...extra,
        WHATSAPP_PACING_PER_CHAT_MS: String(PER_CHAT_MS),
        WHATSAPP_PACING_PER_SECOND: String(PER_SECOND),
      }),
    // The whole burst in one delivery, as WhatsApp batches them.
    deliver: async (url, c, texts) => {
      const burst = texts.map((text, m) => ({
        from: senderOf(c),
        id: `wamid.p${c}.m${m}`,
        timestamp: "1700000000",
        type: "text",
        text: { body: text },
      }));
      return [(await postDelivery(url, delivery(burst))).status];
    },
    chatOf: (body) => (body as { to?: string }).to ?? "",
  },
  {
    name: "Telegram",
    stub: startTelegramStub,
    env: (apiUrl, extra) =>
      telegramEnv(apiUrl, {
        ...extra,
        TELEGRAM_PACING_PER_CHAT_MS: String(PER_CHAT_MS),
        TELEGRAM_PACING_PER_SECOND: String(PER_SECOND),
      }),
    // One update per message, in order, as the Bot API posts them.
    deliver: async (url, c, texts) => {
      const statuses: number[] = [];
      for (const [m, text] of texts.entries()) {
        statuses.push((await postTelegram(url, textUpdate(1_000 + c * 10 + m, 50_000 + c, text))).status);
      }
      return statuses;
    },
    chatOf: (body) => String((body as { chat_id?: unknown }).chat_id),
  },
];

/** An agent on loopback: the first message of a conversation gets a reply of PARTS parts, the others one line. */
async function startAgent() {
  const server: Server = createServer(async (req, res) => {
    const message = JSON.parse(await readText(req)) as AgentMessage;
    const text = message.text.endsWith("m0") ? "x".repeat(4_000 * PARTS - 100) : `re ${message.text}`;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ text }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/answer`,
    close: () => closeServer(server),
  };
}

// The processes share their pace through the database, so this needs real PostgreSQL.
describe.skipIf(!TEST_DATABASE_URL)("sends paced across processes (PostgreSQL)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups.length = 0;
  });

  it.each(PRODUCTS)(
    "$name, 4 processes: no chat gets two messages closer than its gap, no account more than its rate in any second",
    async (product) => {
      const database = await createTestDatabase();
      cleanups.push(() => database.drop());
      const graph = await product.stub();
      cleanups.push(() => graph.close());
      const agent = await startAgent();
      cleanups.push(() => agent.close());
      const env = product.env(graph.url, {
        AGENT_URL: agent.url,
        DATABASE_URL: database.url,
        MESSAGING_WORKER_CONCURRENCY: "8",
        MESSAGING_WORKER_POLL_MS: "50",
      });
      const servers: ChildServer[] = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const server = await spawnServer(env);
          cleanups.unshift(() => server.kill("SIGKILL"));
          return server;
        }),
      );
      // Every conversation's burst to a different process each: all four race for the same chats and account.
      await Promise.all(
        Array.from({ length: CONVERSATIONS }, async (_, c) => {
          const texts = Array.from({ length: BURST }, (_, m) => `c${c} m${m}`);
          const statuses = await product.deliver((servers[c % servers.length] as ChildServer).url, c, texts);
          expect(
            statuses.every((status) => status === 200),
            `deliveries of conversation ${c}`,
          ).toBe(true);
        }),
      );
      const total = CONVERSATIONS * (PARTS + BURST - 1);
      await waitFor(`${total} replies`, () => graph.accepted().length >= total, 30_000).catch((error) => {
        const warnings = servers.flatMap((server) =>
          server.output.filter((line) => /"level":(40|50)/.test(line)),
        );
        throw new Error(`${error}; ${graph.requests.length} sent; ${warnings.slice(0, 5).join("\n")}`);
      });
      // Anything still to come would be a second answer.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sends = graph.requests;
      expect(sends).toHaveLength(total);

      const byChat = new Map<string, number[]>();
      for (const send of sends) {
        const to = product.chatOf(send.body);
        byChat.set(to, [...(byChat.get(to) ?? []), send.at]);
      }
      expect(byChat.size).toBe(CONVERSATIONS);
      for (const [to, times] of byChat) {
        expect(times, `sends to ${to}`).toHaveLength(PARTS + BURST - 1);
        const gaps = times
          .sort((a, b) => a - b)
          .slice(1)
          .map((at, index) => at - (times[index] as number));
        // Date.now() counts whole milliseconds: a gap of 200.0 ms can read as 199.
        expect(Math.min(...gaps), `closest two sends to ${to}`).toBeGreaterThanOrEqual(PER_CHAT_MS - 1);
      }
      // The one sending number: at most PER_SECOND arrivals in any window shorter than a second.
      const times = sends.map((send) => send.at).sort((a, b) => a - b);
      let busiest = 0;
      for (let first = 0, last = 0; last < times.length; last++) {
        while ((times[last] as number) - (times[first] as number) >= 999) first++;
        busiest = Math.max(busiest, last - first + 1);
      }
      expect(busiest).toBeLessThanOrEqual(PER_SECOND);
      // It was the pace that held them: without it the 60 sends would take well under a second.
      expect((times.at(-1) as number) - (times[0] as number)).toBeGreaterThanOrEqual(
        ((total - PER_SECOND) / PER_SECOND) * 1000 - 50,
      );
    },
    60_000,
  );
});
