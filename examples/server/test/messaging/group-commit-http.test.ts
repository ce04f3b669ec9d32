import { afterEach, describe, expect, it } from "vitest";
import { TEST_DATABASE_URL } from "../databases.js";
import { overlappingDeliveries } from "./support/batches.js";
import { blockInboxWrites } from "./support/block-writes.js";
import { type GraphStub, startGraphStub } from "./support/graph-stub.js";
import { type MessagingTestServer, startMessagingServer } from "./support/server.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./support/whatsapp.js";

// The worker is held back: these tests look at what the webhook stored and answered, nothing else.
const QUIET_WORKER = { MESSAGING_WORKER_START_DELAY_MS: "3600000" };

function deliveryOf(ids: string[]) {
  return delivery(ids.map((id) => textMessage(id, "15550001111", `text of ${id}`)));
}

describe.skipIf(!TEST_DATABASE_URL)("the webhook's group commit over HTTP (PostgreSQL)", () => {
  let graph: GraphStub | undefined;
  let server: MessagingTestServer | undefined;
  afterEach(async () => {
    await server?.stop();
    await graph?.close();
  });

  async function start() {
    graph = await startGraphStub();
    server = await startMessagingServer("postgres", channelEnv(graph.url, QUIET_WORKER));
    const url = new URL(TEST_DATABASE_URL as string);
    url.pathname = `/${await server.databaseName()}`;
    return { server, databaseUrl: url.href };
  }

  it("answers 500 concurrent deliveries with overlapping duplicates exactly, storing every message once", async () => {
    const { server } = await start();
    const plan = overlappingDeliveries(500);
    const seeding = await postDelivery(server.url, deliveryOf(plan.seeded));
    expect(await seeding.json()).toMatchObject({ received: plan.seeded.length });

    const responses = await Promise.all(
      plan.deliveries.map((ids) => postDelivery(server.url, deliveryOf(ids))),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(500).fill(200));
    const answers = await Promise.all(
      responses.map(async (response) => {
        const { status, ...counts } = (await response.json()) as {
          status: string;
          received: number;
          duplicates: number;
        };
        expect(status).toBe("accepted");
        return counts;
      }),
    );
    plan.check(answers);
    expect(await server.inboxIds()).toEqual([...plan.allIds].sort());
  });

  it("answers 503 to every delivery of a batch whose backend was terminated, storing nothing of them", async () => {
    const { server, databaseUrl } = await start();
    // The inbox exists once a first delivery went through.
    expect((await postDelivery(server.url, deliveryOf(["before"]))).status).toBe(200);
    const block = await blockInboxWrites(databaseUrl);
    try {
      // A lone delivery commits at once and waits on the lock; the ones after it gather behind it.
      const lone = postDelivery(server.url, deliveryOf(["lone.1", "lone.2"]));
      await block.waitForBlockedInsert();
      const deliveries = [
        lone,
        ...Array.from({ length: 20 }, (_, i) =>
          postDelivery(server.url, deliveryOf([`batch.${i}.1`, `batch.${i}.2`])),
        ),
      ];
      let answered = false;
      const statuses = Promise.all(deliveries.map(async (response) => (await response).status)).finally(
        () => {
          answered = true;
        },
      );
      // Every commit that reaches the database is killed mid-statement, until every delivery has its answer.
      while (!answered) {
        for (const pid of await block.blockedInserts()) await block.terminate(pid);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await statuses).toEqual(Array(21).fill(503));
    } finally {
      await block.release();
    }
    expect(await server.inboxIds()).toEqual(["before"]);
    expect((await postDelivery(server.url, deliveryOf(["after"]))).status).toBe(200);
  });
});
