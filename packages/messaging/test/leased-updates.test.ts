import { randomUUID } from "node:crypto";
import pino from "pino";
import postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../src/channel.js";
import { migrateInbox } from "../src/inbox/schema.js";
import { type ClaimedMessage, InboxStore } from "../src/inbox/store.js";
import {
  connect,
  DATABASES,
  freshPostgres,
  TEST_DATABASE_URL,
  type TestDatabase,
} from "./support/database.js";

const logger = pino({ level: "silent" });
/** One commit in flight: the first update goes alone, the ones submitted meanwhile share the next commit. */
const BOUNDS = { maxBatchSize: 64, maxInFlight: 1, maxWaitMs: 60_000 };

function message(id: string): InboundMessage {
  return { id, accountId: "acc", from: "491", type: "text", text: id, supported: true, raw: { id } };
}

/** `count` messages stored and leased by `store`, in message id order. */
async function leased(store: InboxStore, count: number): Promise<ClaimedMessage[]> {
  const ids = Array.from({ length: count }, (_, i) => `m${String(i).padStart(2, "0")}`);
  await store.insert("whatsapp", ids.map(message));
  const claimed = await store.claim("whatsapp", count, 60_000);
  expect(claimed).toHaveLength(count);
  return claimed.sort((a, b) => (a.messageId < b.messageId ? -1 : 1));
}

describe.each(DATABASES)("group commit of the workers' leased updates on $name", ({ fresh }) => {
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

  it("commits the updates that arrive during a commit together, each answered for its own lease", async () => {
    const store = new InboxStore(sql, async () => {}, BOUNDS);
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

  it("fails only the update PostgreSQL refuses, applying the others of its batch", async () => {
    const store = new InboxStore(sql, async () => {}, BOUNDS);
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

/** Backends of `database` whose UPDATE of the inbox waits on a lock, polled until there are `count` (up to 10 s). */
async function blockedUpdates(admin: postgres.Sql, count: number): Promise<number[]> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const rows = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND query LIKE '%UPDATE messaging.inbox SET%'`;
    if (rows.length >= count) return rows.map((row) => row.pid);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`fewer than ${count} inbox updates are waiting on a lock`);
}

describe.skipIf(!TEST_DATABASE_URL)("leased updates shared between processes on PostgreSQL", () => {
  let database: TestDatabase;
  let admin: postgres.Sql;
  let holder: postgres.Sql;

  beforeEach(async () => {
    database = await freshPostgres();
    admin = postgres(database.url, { max: 1, onnotice: () => {} });
    holder = postgres(database.url, { max: 1, onnotice: () => {} });
    await migrateInbox(admin, logger);
  });
  afterEach(async () => {
    await holder.end({ timeout: 1 });
    await admin.end({ timeout: 1 });
    await database.drop();
  });

  /** Holds the row of `messageId` locked (FOR UPDATE) until the returned function is called. */
  async function lockRow(messageId: string): Promise<() => Promise<void>> {
    await holder.unsafe("BEGIN");
    await holder`SELECT 1 FROM messaging.inbox WHERE message_id = ${messageId} FOR UPDATE`;
    return async () => {
      await holder.unsafe("COMMIT");
    };
  }

  it("takes row locks in one order, so two processes updating the same rows in opposite orders do not deadlock", async () => {
    const pools = [connect(database), connect(database)];
    try {
      const [ascending, descending] = pools.map((pool) => new InboxStore(pool, async () => {}, BOUNDS));
      if (!ascending || !descending) throw new Error("two stores expected");
      const rows = await leased(ascending, 20);
      // With row m10 held, each process's batch runs up to it and waits: in submission order the descending
      // one would hold m11-m18 and wait for m10 while the ascending one, once given m10, waits for m11.
      const release = await lockRow("m10");
      const up = Promise.allSettled(rows.map((row) => ascending.renewLease(row, 60_000)));
      const down = Promise.allSettled([...rows].reverse().map((row) => descending.renewLease(row, 60_000)));
      await blockedUpdates(admin, 2);
      await release();
      for (const outcomes of [await up, await down]) {
        expect(outcomes).toEqual(rows.map(() => ({ status: "fulfilled", value: true })));
      }
    } finally {
      await Promise.all(pools.map((pool) => pool.end({ timeout: 1 })));
    }
  });

  it("fails every update of a batch whose backend was terminated, and applies none of them", async () => {
    const sql = connect(database);
    try {
      const store = new InboxStore(sql, async () => {}, BOUNDS);
      const rows = await leased(store, 10);
      const release = await lockRow("m05");
      // m00 commits alone; m01-m09 share a transaction that stops at m05: kill it there.
      const outcomes = Promise.allSettled(rows.map((row) => store.markPartsSent(row, 1, 60_000)));
      const [pid] = await blockedUpdates(admin, 1);
      await admin`SELECT pg_terminate_backend(${pid as number})`;
      await release();
      const settled = await outcomes;
      expect(settled[0]).toEqual({ status: "fulfilled", value: true });
      expect(settled.slice(1).map((outcome) => outcome.status)).toEqual(Array(9).fill("rejected"));
      const stored = await admin<{ parts_sent: number }[]>`
        SELECT parts_sent FROM messaging.inbox ORDER BY message_id`;
      expect(stored.map((row) => row.parts_sent)).toEqual([1, ...Array<number>(9).fill(0)]);
      // The leases still hold: the same updates succeed once the database answers again.
      expect(await store.markPartsSent(rows[1] as ClaimedMessage, 1, 60_000)).toBe(true);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
