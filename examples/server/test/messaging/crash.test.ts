import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_DATABASE_URL } from "../databases.js";
import { blockInboxWrites } from "./support/block-writes.js";
import { type ChildServer, spawnServer } from "./support/child-server.js";
import { startGraphStub, waitFor } from "./support/graph-stub.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./support/whatsapp.js";

// Child processes share the database, so this needs real PostgreSQL (PGlite is one process's file).
describe.skipIf(!TEST_DATABASE_URL)("the inbox survives SIGKILL (server child processes, PostgreSQL)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups.length = 0;
  });

  async function setup() {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const graph = await startGraphStub();
    cleanups.push(() => graph.close());
    const spawn = async (extra: Record<string, string> = {}) => {
      const server = await spawnServer({ DATABASE_URL: database.url, ...channelEnv(graph.url, extra) });
      cleanups.unshift(() => server.kill("SIGKILL"));
      return server;
    };
    return { graph, spawn, database };
  }

  it("answers a message acknowledged just before a SIGKILL exactly once after the restart", async () => {
    const { graph, spawn } = await setup();
    // The worker of the first process never starts: it dies holding acknowledged, unprocessed messages.
    const first: ChildServer = await spawn({ MESSAGING_WORKER_START_DELAY_MS: "3600000" });
    const payload = delivery([textMessage("wamid.crash", "15557770000", "are you there?")]);
    const response = await postDelivery(first.url, payload);
    expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    await first.kill("SIGKILL");
    expect(first.child.signalCode).toBe("SIGKILL");
    expect(graph.requests).toHaveLength(0);

    const second = await spawn();
    await waitFor("the reply after the restart", () => graph.accepted().length === 1);
    // Meta redelivers what it thinks was not handled: still one reply.
    const again = await postDelivery(second.url, payload);
    expect(await again.json()).toEqual({ status: "accepted", received: 0, duplicates: 1 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(graph.requests.map((r) => [r.body.to, r.body.text?.body])).toEqual([
      ["15557770000", "are you there?"],
    ]);
  });

  it("reclaims a message whose worker was killed mid-send once its lease expires", async () => {
    const { graph, spawn } = await setup();
    graph.answer = () => "hang";
    // A short lease needs a shorter send timeout (the server refuses a lease the send could outlast).
    const first = await spawn({ MESSAGING_VISIBILITY_TIMEOUT_MS: "1000", WHATSAPP_API_TIMEOUT_MS: "900" });
    await postDelivery(first.url, delivery([textMessage("wamid.midsend", "15557770001", "slow")]));
    await waitFor("the first send attempt", () => graph.requests.length === 1);
    await first.kill("SIGKILL");

    graph.answer = () => 200;
    await spawn();
    await waitFor("the reply from the second process", () => graph.accepted().length === 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The killed attempt never got an answer from the Graph API; the reclaimed one did, once.
    expect(graph.requests.map((r) => r.status)).toEqual([0, 200]);
  });

  it("sends no 200 for a delivery it had not stored when SIGKILLed with a shared commit in flight", async () => {
    const { spawn, database } = await setup();
    const server = await spawn({ MESSAGING_WORKER_START_DELAY_MS: "3600000" });
    const ids = (name: string) => [`${name}.1`, `${name}.2`, `${name}.3`];
    const send = (name: string) =>
      postDelivery(server.url, delivery(ids(name).map((id) => textMessage(id, "15557770002", id)))).then(
        (response) => response.status,
        () => 0, // the connection died with the process: no answer
      );
    const early = await Promise.all(Array.from({ length: 50 }, (_, i) => send(`early.${i}`)));
    expect(early).toEqual(Array(50).fill(200));

    // Commits now wait on a lock, so when the process dies one is surely in flight with deliveries queued
    // behind it.
    const block = await blockInboxWrites(database.url);
    let late: number[];
    try {
      const sending = Promise.all(Array.from({ length: 200 }, (_, i) => send(`late.${i}`)));
      await block.waitForBlockedInsert();
      await server.kill("SIGKILL");
      late = await sending;
    } finally {
      // The killed process's backend may still commit its statement: stored without a 200 is allowed.
      await block.release();
    }

    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const rows = await sql<{ message_id: string }[]>`SELECT message_id FROM messaging.inbox`;
    await sql.end();
    const stored = new Set(rows.map((row) => row.message_id));
    const statuses = [...early, ...late];
    const names = [...early.map((_, i) => `early.${i}`), ...late.map((_, i) => `late.${i}`)];
    expect(late.filter((status) => status === 200)).toEqual([]);
    names.forEach((name, index) => {
      const storedOfDelivery = ids(name).filter((id) => stored.has(id)).length;
      // All of a delivery or none of it, and all of it whenever it was answered 200.
      expect([0, 3]).toContain(storedOfDelivery);
      if (statuses[index] === 200) expect(storedOfDelivery).toBe(3);
    });
  });
});
