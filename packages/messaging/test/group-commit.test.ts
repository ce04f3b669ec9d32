import pino from "pino";
import type postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../src/channel.js";
import { migrateInbox } from "../src/inbox/schema.js";
import { type DeliveryWrite, InboxStore, type InsertCounts } from "../src/inbox/store.js";
import { overlappingDeliveries } from "./support/batches.js";
import { blockInboxWrites } from "./support/block-writes.js";
import {
  connect,
  DATABASES,
  freshPostgres,
  TEST_DATABASE_URL,
  type TestDatabase,
} from "./support/database.js";

const logger = pino({ level: "silent" });

function message(id: string): InboundMessage {
  return {
    id,
    accountId: "acc",
    from: "491",
    type: "text",
    text: `text of ${id}`,
    supported: true,
    raw: { id },
  };
}

/** The store with every shared commit's deliveries recorded, to see that batches really formed. */
class RecordingStore extends InboxStore {
  readonly batches: DeliveryWrite[][] = [];
  override insertDeliveries(deliveries: readonly DeliveryWrite[]): Promise<InsertCounts[]> {
    this.batches.push([...deliveries]);
    return super.insertDeliveries(deliveries);
  }
}

const BOUNDS = { maxBatchSize: 64, maxInFlight: 2, maxWaitMs: 60_000 };

describe.each(DATABASES)("group commit of the inbox on $name", ({ fresh }) => {
  let database: TestDatabase;
  let sql: postgres.Sql;

  beforeEach(async () => {
    database = await fresh();
    sql = connect(database);
    await migrateInbox(sql, logger);
  });
  afterEach(async () => {
    await sql.end();
    await database.drop();
  });

  it("stores 500 concurrent deliveries with overlapping duplicates once each, with each delivery's exact counts", async () => {
    const store = new RecordingStore(sql, async () => {}, BOUNDS);
    const plan = overlappingDeliveries(500);
    await store.insert("whatsapp", plan.seeded.map(message));

    const answers = await Promise.all(
      plan.deliveries.map((ids) => store.insert("whatsapp", ids.map(message))),
    );

    plan.check(answers);
    const rows = await sql<{ message_id: string; text: string }[]>`
      SELECT message_id, message->>'text' AS text FROM messaging.inbox ORDER BY message_id`;
    expect(rows.map((row) => row.message_id)).toEqual([...plan.allIds].sort());
    for (const row of rows) expect(row.text).toBe(`text of ${row.message_id}`);
    // Batches formed (far fewer statements than deliveries), none over the bound, and the first went alone.
    const deliveryBatches = store.batches.slice(1); // [0] is the seeding insert
    expect(deliveryBatches[0]).toHaveLength(1);
    expect(deliveryBatches.length).toBeLessThan(plan.deliveries.length / 4);
    for (const batch of deliveryBatches) {
      expect(batch.reduce((size, delivery) => size + delivery.messages.length, 0)).toBeLessThanOrEqual(64);
    }
  });

  it("gives a duplicate within one batch to the first delivery that sent it, the others counting it as a duplicate", async () => {
    const store = new InboxStore(sql);
    expect(
      await store.insertDeliveries([
        { channel: "whatsapp", messages: [message("x"), message("y")], rejected: [] },
        { channel: "whatsapp", messages: [message("y"), message("z"), message("z")], rejected: [] },
        { channel: "telegram", messages: [message("x")], rejected: [] },
      ]),
    ).toEqual([
      { received: 2, duplicates: 0 },
      { received: 1, duplicates: 2 },
      { received: 1, duplicates: 0 },
    ]);
  });

  it("stores text jsonb refuses (U+0000, unpaired surrogates, in keys and values) as U+FFFD, its batch-mates untouched", async () => {
    const store = new RecordingStore(sql, async () => {}, BOUNDS);
    const hostile = (id: string): InboundMessage => ({
      ...message(id),
      text: "a\ud800b\u0000",
      raw: { "k\u0000": "\udc00", "\udbff": ["\ud83d\ude00", "x\u0000"] },
    });
    const ids = Array.from({ length: 60 }, (_, i) => `m${i}`);
    const answers = await Promise.all(
      ids.map((id, i) => store.insert("whatsapp", [i % 10 === 3 ? hostile(`${id}\ud800`) : message(id)])),
    );
    expect(answers).toEqual(ids.map(() => ({ received: 1, duplicates: 0 })));
    expect(store.batches.some((batch) => batch.length > 1)).toBe(true);
    const rows = await sql<{ message_id: string; message: InboundMessage }[]>`
      SELECT message_id, message FROM messaging.inbox WHERE message_id = ${"m3\uFFFD"}`;
    expect(rows[0]?.message_id).toBe("m3\uFFFD");
    expect(rows[0]?.message.text).toBe("a\uFFFDb\uFFFD");
    expect(rows[0]?.message.raw).toEqual({ "k\uFFFD": "\uFFFD", "\uFFFD": ["\ud83d\ude00", "x\uFFFD"] });
    // The same hostile id again is a duplicate of what was stored, not a second row.
    expect(await store.insert("whatsapp", [hostile("m3\ud800")])).toEqual({ received: 0, duplicates: 1 });
  });

  it("fails only the deliveries PostgreSQL refuses for their content, storing the others of their batch", async () => {
    // A constraint stands in for whatever content the database may refuse that the store cannot foresee.
    await sql`ALTER TABLE messaging.inbox ADD CONSTRAINT no_poison CHECK (message_id NOT LIKE 'poison%')`;
    const store = new RecordingStore(sql, async () => {}, BOUNDS);
    const ids = Array.from({ length: 120 }, (_, i) => (i % 17 === 5 ? `poison${i}` : `good${i}`));
    const outcomes = await Promise.allSettled(
      ids.map((id) => store.insert("whatsapp", [message(id), message(`${id}-second`)])),
    );
    ids.forEach((id, i) => {
      const outcome = outcomes[i];
      if (id.startsWith("poison")) {
        expect(outcome?.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: "23514" });
      } else {
        expect(outcome).toEqual({ status: "fulfilled", value: { received: 2, duplicates: 0 } });
      }
    });
    // Refused deliveries shared batches with good ones, and nothing of a refused delivery was stored.
    expect(
      store.batches.some(
        (batch) => batch.length > 1 && batch.some((d) => d.messages[0]?.id.startsWith("poison")),
      ),
    ).toBe(true);
    const [counted] = await sql<{ good: number; poison: number }[]>`
      SELECT count(*) FILTER (WHERE message_id LIKE 'good%')::int AS good,
             count(*) FILTER (WHERE message_id LIKE 'poison%')::int AS poison
      FROM messaging.inbox`;
    expect(counted).toEqual({ good: 2 * ids.filter((id) => id.startsWith("good")).length, poison: 0 });
  });
});

describe.skipIf(!TEST_DATABASE_URL)("group commit of the inbox on PostgreSQL when the backend dies", () => {
  it("fails every delivery of the batch whose backend was terminated, and stores nothing of it", async () => {
    const database = await freshPostgres();
    const sql = connect(database);
    try {
      await migrateInbox(sql, logger);
      const store = new RecordingStore(sql, async () => {}, { ...BOUNDS, maxInFlight: 1 });
      const block = await blockInboxWrites(database.url);
      // The first delivery commits alone and waits on the lock; 20 more gather behind it into one batch.
      const lone = Promise.allSettled([store.insert("whatsapp", [message("lone.1"), message("lone.2")])]);
      const waitingInsert = await block.waitForBlockedInsert();
      const batch = Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          store.insert("whatsapp", [
            message(`batch.${i}.1`),
            message(`batch.${i}.2`),
            message(`batch.${i}.3`),
          ]),
        ),
      );
      await block.terminate(waitingInsert);
      expect((await lone).map((outcome) => outcome.status)).toEqual(["rejected"]);
      // The batch is now in flight on a new connection, blocked again: kill it mid-statement too.
      await block.terminate(await block.waitForBlockedInsert());
      const outcomes = await batch;
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(20).fill("rejected"));
      expect(store.batches.map((deliveries) => deliveries.length)).toEqual([1, 20]);
      await block.release();

      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM messaging.inbox`;
      expect(row?.n).toBe(0);
      // The store works again once the database does.
      expect(await store.insert("whatsapp", [message("after")])).toEqual({ received: 1, duplicates: 0 });
    } finally {
      // A pool that lost a backend does not finish end() by itself (postgres.js 3.4): bound it.
      await sql.end({ timeout: 1 });
      await database.drop();
    }
  });
});
