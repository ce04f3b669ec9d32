import { randomUUID } from "node:crypto";
import pino from "pino";
import postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../src/channel.js";
import { migrateInbox } from "../src/inbox/schema.js";
import {
  type ClaimedMessage,
  type DeliveryWrite,
  InboxStore,
  type InsertCounts,
} from "../src/inbox/store.js";
import { overlappingDeliveries } from "./support/batches.js";
import { blockInboxWrites } from "./support/block-writes.js";
import {
  connect,
  DATABASES,
  freshPostgres,
  TEST_DATABASE_URL,
  type TestDatabase,
} from "./support/database.js";
import { textMessage } from "./support/messages.js";

const logger = pino({ level: "silent" });

const message = (id: string) => textMessage(id, { text: `text of ${id}` });

/** The store with every shared commit's deliveries recorded, to see that batches really formed. */
class RecordingStore extends InboxStore {
  readonly batches: DeliveryWrite[][] = [];
  override insertDeliveries(deliveries: readonly DeliveryWrite[]): Promise<InsertCounts[]> {
    this.batches.push([...deliveries]);
    return super.insertDeliveries(deliveries);
  }
}

const BOUNDS = { maxBatchSize: 64, maxInFlight: 2, maxWaitMs: 60_000 };
/** One commit in flight: the first write goes alone, the ones submitted meanwhile share the next commit. */
const ONE_IN_FLIGHT = { ...BOUNDS, maxInFlight: 1 };

/** `count` messages stored and leased by `store`, in message id order. */
async function leased(store: InboxStore, count: number): Promise<ClaimedMessage[]> {
  const ids = Array.from({ length: count }, (_, i) => `m${String(i).padStart(2, "0")}`);
  await store.insert("whatsapp", ids.map(message));
  const claimed = await store.claim("whatsapp", count, 60_000);
  expect(claimed).toHaveLength(count);
  return claimed.sort((a, b) => (a.messageId < b.messageId ? -1 : 1));
}

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
  it("commits the workers' leased updates that arrive during a commit together, each answered for its own lease", async () => {
    const store = new InboxStore(sql, async () => {}, ONE_IN_FLIGHT);
    const rows = await leased(store, 12);
    const stale = { ...(rows[11] as ClaimedMessage), leaseId: randomUUID() };
    const outcomes = await Promise.all(
      [...rows.slice(0, 11), stale].map((row, i) => store.saveReply(row, [`reply ${i}`], 60_000)),
    );
    expect(outcomes).toEqual([...Array<boolean>(11).fill(true), false]);
    const stored = await sql<{ reply_parts: string[] | null; updated_at: string }[]>`
      SELECT reply_parts, updated_at::text AS updated_at FROM messaging.inbox ORDER BY message_id`;
    expect(stored.map((row) => row.reply_parts)).toEqual([
      ...Array.from({ length: 11 }, (_, i) => [`reply ${i}`]),
      null,
    ]);
    // now() is the transaction's start: the first update committed alone, the ten after it in one transaction.
    const times = stored.slice(0, 11).map((row) => row.updated_at);
    expect(new Set(times.slice(1)).size).toBe(1);
    expect(times[0]).not.toBe(times[1]);
  });

  it("fails only the leased update PostgreSQL refuses, applying the others of its batch", async () => {
    const store = new InboxStore(sql, async () => {}, ONE_IN_FLIGHT);
    const rows = await leased(store, 8);
    // parts_sent is an integer column: 2^31 is refused (22003) when the statement runs, as unforeseen content would be.
    const outcomes = await Promise.allSettled(
      rows.map((row, i) => store.markPartsSent(row, i === 4 ? 2 ** 31 : i + 1, 60_000)),
    );
    expect(outcomes[4]).toMatchObject({ status: "rejected", reason: { code: "22003" } });
    for (const index of [0, 1, 2, 3, 5, 6, 7]) {
      expect(outcomes[index]).toEqual({ status: "fulfilled", value: true });
    }
    const stored = await sql<{ parts_sent: number }[]>`
      SELECT parts_sent FROM messaging.inbox ORDER BY message_id`;
    expect(stored.map((row) => row.parts_sent)).toEqual([1, 2, 3, 4, 0, 6, 7, 8]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)(
  "group commit of the inbox on PostgreSQL, one connection against another",
  () => {
    it("fails every delivery of the batch whose backend was terminated, and stores nothing of it", async () => {
      const database = await freshPostgres();
      const sql = connect(database);
      try {
        await migrateInbox(sql, logger);
        const store = new RecordingStore(sql, async () => {}, ONE_IN_FLIGHT);
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

    it("takes leased updates' row locks in one order, so two processes updating the same rows in opposite orders do not deadlock", async () => {
      const database = await freshPostgres();
      const pools = [connect(database), connect(database)];
      const rowLock = await holdRowLocks(database.url);
      try {
        await migrateInbox(rowLock.admin, logger);
        const [ascending, descending] = pools.map(
          (pool) => new InboxStore(pool, async () => {}, ONE_IN_FLIGHT),
        );
        if (!ascending || !descending) throw new Error("two stores expected");
        const rows = await leased(ascending, 20);
        // With row m10 held, each process's batch runs up to it and waits: in submission order the descending
        // one would hold m11-m18 and wait for m10 while the ascending one, once given m10, waits for m11.
        await rowLock.lock("m10");
        const up = Promise.allSettled(rows.map((row) => ascending.renewLease(row, 60_000)));
        const down = Promise.allSettled([...rows].reverse().map((row) => descending.renewLease(row, 60_000)));
        await rowLock.blockedUpdates(2);
        await rowLock.release();
        for (const outcomes of [await up, await down]) {
          expect(outcomes).toEqual(rows.map(() => ({ status: "fulfilled", value: true })));
        }
      } finally {
        await Promise.all(pools.map((pool) => pool.end({ timeout: 1 })));
        await rowLock.end();
        await database.drop();
      }
    });

    it("fails every leased update of a batch whose backend was terminated, and applies none of them", async () => {
      const database = await freshPostgres();
      const sql = connect(database);
      const rowLock = await holdRowLocks(database.url);
      try {
        await migrateInbox(sql, logger);
        const store = new InboxStore(sql, async () => {}, ONE_IN_FLIGHT);
        const rows = await leased(store, 10);
        await rowLock.lock("m05");
        // m00 commits alone; m01-m09 share a transaction that stops at m05: kill it there.
        const outcomes = Promise.allSettled(rows.map((row) => store.markPartsSent(row, 1, 60_000)));
        const [pid] = await rowLock.blockedUpdates(1);
        await rowLock.admin`SELECT pg_terminate_backend(${pid as number})`;
        await rowLock.release();
        const settled = await outcomes;
        expect(settled[0]).toEqual({ status: "fulfilled", value: true });
        expect(settled.slice(1).map((outcome) => outcome.status)).toEqual(Array(9).fill("rejected"));
        const stored = await sql<{ parts_sent: number }[]>`
        SELECT parts_sent FROM messaging.inbox ORDER BY message_id`;
        expect(stored.map((row) => row.parts_sent)).toEqual([1, ...Array<number>(9).fill(0)]);
        // The leases still hold: the same updates succeed once the database answers again.
        expect(await store.markPartsSent(rows[1] as ClaimedMessage, 1, 60_000)).toBe(true);
      } finally {
        await sql.end({ timeout: 1 });
        await rowLock.end();
        await database.drop();
      }
    });
  },
);

/**
 * A row of the inbox held `FOR UPDATE` from a connection of its own, so the leased updates of a batch stop at it
 * and can be caught in flight; `admin` is a second connection to look at and terminate backends.
 */
async function holdRowLocks(url: string) {
  const holder = postgres(url, { max: 1, onnotice: () => {} });
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  return {
    admin,
    async lock(messageId: string): Promise<void> {
      await holder.unsafe("BEGIN");
      await holder`SELECT 1 FROM messaging.inbox WHERE message_id = ${messageId} FOR UPDATE`;
    },
    async release(): Promise<void> {
      await holder.unsafe("COMMIT");
    },
    /** Backends whose UPDATE of the inbox waits on a lock, polled until there are `count` (up to 10 s). */
    async blockedUpdates(count: number): Promise<number[]> {
      for (let attempt = 0; attempt < 1000; attempt++) {
        const rows = await admin<{ pid: number }[]>`
          SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND query LIKE '%UPDATE messaging.inbox SET%'`;
        if (rows.length >= count) return rows.map((row) => row.pid);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`fewer than ${count} inbox updates are waiting on a lock`);
    },
    async end(): Promise<void> {
      await Promise.all([holder.end({ timeout: 1 }), admin.end({ timeout: 1 })]);
    },
  };
}
