import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentMessage } from "@agent-platform/messaging";
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_DATABASE_URL } from "../databases.js";
import { type ChildServer, spawnServer } from "./support/child-server.js";
import { closeServer, readText, startGraphStub, waitFor } from "./support/graph-stub.js";
import { channelEnv, delivery, PHONE_NUMBER_ID, postDelivery } from "./support/whatsapp.js";

const CONVERSATIONS = 50;
const BURST = 5;

/** Sender of conversation `c` and the text of its message `m`: the test reads the order back from them. */
const senderOf = (c: number) => `4915550${String(c).padStart(4, "0")}`;
const textOf = (c: number, m: number) => `c${c} m${m}`;

/**
 * An agent runtime on loopback that takes a random 0–50 ms, fails the first attempt of every seventh message
 * (503: retried by the worker), records every call per conversation, and counts calls in flight per conversation.
 */
async function startOrderedAgent() {
  const calls = new Map<string, string[]>();
  const inFlight = new Map<string, number>();
  const attempts = new Map<string, number>();
  let overlap = 0;
  const server: Server = createServer(async (req, res) => {
    const message = JSON.parse(await readText(req)) as AgentMessage;
    const session = message.sessionId;
    calls.set(session, [...(calls.get(session) ?? []), message.text]);
    const now = (inFlight.get(session) ?? 0) + 1;
    inFlight.set(session, now);
    if (now > 1) overlap++;
    const settle = () => inFlight.set(session, (inFlight.get(session) ?? 1) - 1);
    let settled = false;
    res.on("close", () => {
      if (!settled) settle();
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 50));
    const attempt = (attempts.get(message.text) ?? 0) + 1;
    attempts.set(message.text, attempt);
    const [c = 0, m = 0] = (message.text.match(/\d+/g) ?? []).map(Number);
    if (!settled) settle();
    settled = true;
    if (attempt === 1 && (c * BURST + m) % 7 === 0) {
      res.writeHead(503, { "content-type": "application/json" }).end('{"detail":"busy"}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ text: `re ${message.text}` }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/answer`,
    calls,
    overlap: () => overlap,
    close: () => closeServer(server),
  };
}

/** Consecutive repeats collapsed: a retried call or a resent reply stays where it was in the order. */
function collapsed(items: readonly string[]): string[] {
  return items.filter((item, index) => index === 0 || items[index - 1] !== item);
}

// Child processes share the database, so this needs real PostgreSQL.
describe.skipIf(!TEST_DATABASE_URL)("one conversation in order across processes (PostgreSQL)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups.length = 0;
  });

  async function run(processes: number, killOne: boolean) {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const graph = await startGraphStub();
    cleanups.push(() => graph.close());
    const agent = await startOrderedAgent();
    cleanups.push(() => agent.close());
    const env = channelEnv(graph.url, {
      AGENT_URL: agent.url,
      DATABASE_URL: database.url,
      MESSAGING_WORKER_CONCURRENCY: "8",
      MESSAGING_WORKER_POLL_MS: "50",
      // A killed process's leases run out quickly; the lease must outlast each call.
      MESSAGING_VISIBILITY_TIMEOUT_MS: "2000",
      AGENT_TIMEOUT_MS: "1500",
      WHATSAPP_API_TIMEOUT_MS: "1500",
      // Order, not pace, is under test here (pacing.test.ts paces): the 6 s pair rate would make it minutes.
      WHATSAPP_PACING_PER_CHAT_MS: "0",
    });
    const servers: ChildServer[] = await Promise.all(
      Array.from({ length: processes }, async () => {
        const server = await spawnServer(env);
        cleanups.unshift(() => server.kill("SIGKILL"));
        return server;
      }),
    );
    const alive = new Set(servers);
    // Like a chat product, a delivery that was not acknowledged (its process died) is delivered again, elsewhere.
    const deliver = async (first: number, body: object) => {
      for (let attempt = 0; attempt < 20; attempt++) {
        const server = servers[(first + attempt) % servers.length] as ChildServer;
        if (!alive.has(server)) continue;
        const response = await postDelivery(server.url, body).catch(() => undefined);
        if (response?.status === 200) return;
      }
      throw new Error("a delivery was refused by every process");
    };
    const stamp = (m: number) => String(1_700_000_000 + m);
    const message = (c: number, m: number) => ({
      from: senderOf(c),
      id: `wamid.c${c}.m${m}`,
      // One delivery's messages share a stamp (whole seconds): the order in the delivery decides.
      timestamp: c % 2 === 0 ? stamp(0) : stamp(m),
      type: "text",
      text: { body: textOf(c, m) },
    });
    // Even conversations: the burst in one delivery; odd ones: one delivery per message, each after the last.
    const sending = Array.from({ length: CONVERSATIONS }, async (_, c) => {
      if (c % 2 === 0) {
        const burst = Array.from({ length: BURST }, (_, m) => message(c, m));
        await deliver(c, delivery(burst));
        return;
      }
      for (let m = 0; m < BURST; m++) {
        await deliver(c + m, delivery([message(c, m)]));
      }
    });
    if (killOne) {
      await waitFor("a third of the replies", () => graph.accepted().length >= (CONVERSATIONS * BURST) / 3);
      alive.delete(servers[0] as ChildServer);
      await (servers[0] as ChildServer).kill("SIGKILL");
    }
    await Promise.all(sending);
    const total = CONVERSATIONS * BURST;
    const replies = () =>
      new Set(graph.accepted().map((request) => `${request.body.to}|${request.body.text?.body}`));
    await waitFor(`${total} distinct replies`, () => replies().size === total, 60_000);
    // Anything still to come would be a second answer.
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(agent.overlap()).toBe(0);
    const repliesOf = new Map<string, string[]>();
    for (const request of graph.accepted()) {
      const to = request.body.to ?? "";
      repliesOf.set(to, [...(repliesOf.get(to) ?? []), request.body.text?.body ?? ""]);
    }
    let resent = 0;
    for (let c = 0; c < CONVERSATIONS; c++) {
      const expected = Array.from({ length: BURST }, (_, m) => textOf(c, m));
      const session = `whatsapp:${PHONE_NUMBER_ID}:${senderOf(c)}`;
      expect(collapsed(agent.calls.get(session) ?? []), `agent calls of conversation ${c}`).toEqual(expected);
      const sent = repliesOf.get(senderOf(c)) ?? [];
      expect(collapsed(sent), `replies of conversation ${c}`).toEqual(expected.map((text) => `re ${text}`));
      resent += sent.length - BURST;
    }
    // Without a kill nothing is answered twice. With one, only a reply the killed process had sent but not yet
    // recorded can go out again (the chat APIs take no idempotency key), at most one per message it held.
    if (killOne) expect(resent).toBeLessThanOrEqual(8);
    else expect(resent).toBe(0);
  }

  it.each([1, 2, 4])(
    "%i process(es): every conversation's agent calls and replies in send order, none twice",
    async (processes) => {
      await run(processes, false);
    },
    120_000,
  );

  it("4 processes, one SIGKILLed mid-burst: still in order, nothing lost", async () => {
    await run(4, true);
  }, 120_000);
});
