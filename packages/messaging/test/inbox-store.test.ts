import pino from "pino";
import postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../src/channel.js";
import { migrateInbox } from "../src/inbox/schema.js";
import { InboxStore } from "../src/inbox/store.js";

import {
  connect,
  DATABASES,
  freshPostgres,
  TEST_DATABASE_URL,
  type TestDatabase,
} from "./support/database.js";
import { textMessage } from "./support/messages.js";

const logger = pino({ level: "silent" });

const message = (id: string) => textMessage(id);

describe.each(DATABASES)("inbox store on $name", ({ fresh }) => {
  let database: TestDatabase;
  let sql: postgres.Sql;
  let store: InboxStore;

  beforeEach(async () => {
    database = await fresh();
    sql = connect(database);
    await migrateInbox(sql, logger);
    store = new InboxStore(sql);
  });
  afterEach(async () => {
    await sql.end();
    await database.drop();
  });

  it("migrating again applies nothing and keeps the rows", async () => {
    await store.insert("whatsapp", [message("kept")]);
    await migrateInbox(sql, logger);
    expect(await store.list("whatsapp", undefined, 10)).toHaveLength(1);
  });

  it("stores a delivery's duplicates once, within and across deliveries", async () => {
    expect(await store.insert("whatsapp", [message("a"), message("b"), message("a")])).toEqual({
      received: 2,
      duplicates: 1,
    });
    expect(await store.insert("whatsapp", [message("b"), message("c")])).toEqual({
      received: 1,
      duplicates: 1,
    });
  });

  it("stores U+0000 as U+FFFD and backslashes before u0000 as they are, and dedupes such ids", async () => {
    const text = "nul:\u0000 text:\\u0000 escaped:\\\\u0000 odd:\\\u0000";
    const id = "wamid.\\u0000\u0000";
    const stored = { ...message(id), text, raw: { text, "key\\u0000": 1 } };
    expect(await store.insert("whatsapp", [stored])).toEqual({ received: 1, duplicates: 0 });
    expect(await store.insert("whatsapp", [stored])).toEqual({ received: 0, duplicates: 1 });
    const [row] = await sql<{ message_id: string; message: InboundMessage }[]>`
      SELECT message_id, message FROM messaging.inbox WHERE channel = 'whatsapp'`;
    const replaced = text.replaceAll("\u0000", "\uFFFD");
    expect(row?.message_id).toBe("wamid.\\u0000\uFFFD");
    expect(row?.message.text).toBe(replaced);
    expect(row?.message.raw).toEqual({ text: replaced, "key\\u0000": 1 });
  });

  it("does not hand out a leased row, reclaims it after the lease expires, and ignores the old lease", async () => {
    await store.insert("whatsapp", [message("leased")]);
    const [first] = await store.claim("whatsapp", 10, 300);
    expect(first).toMatchObject({ messageId: "leased", attempts: 1, replyParts: null, partsSent: 0 });
    expect(await store.claim("whatsapp", 10, 300)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const [second] = await store.claim("whatsapp", 10, 60_000);
    expect(second).toMatchObject({ messageId: "leased", attempts: 2 });
    if (!first || !second) return;
    expect(await store.markDone(first, 0)).toBe(false);
    expect(await store.markPartsSent(first, 1, 1000)).toBe(false);
    expect(await store.renewLease(first, 60_000)).toBe(false);
    expect(await store.markDone(second, 0)).toBe(true);
    expect(await store.claim("whatsapp", 10, 300)).toEqual([]);
    expect(await store.list("whatsapp", "done", 10)).toEqual([
      expect.objectContaining({ message_id: "leased" }),
    ]);
  });

  it("records an error quoting text PostgreSQL refuses (U+0000, an unpaired surrogate) as U+FFFD", async () => {
    await store.insert("whatsapp", [message("hostile-error")]);
    const [claimed] = await store.claim("whatsapp", 1, 60_000);
    if (!claimed) throw new Error("nothing claimed");
    expect(await store.retryLater(claimed, "agent said a\u0000b\ud800", 0)).toBe(true);
    const [again] = await store.claim("whatsapp", 1, 60_000);
    expect(again?.lastError).toBe("agent said a\uFFFDb\uFFFD");
    if (!again) return;
    expect(await store.markFailed(again, "gave up: \u0000")).toBe(true);
    expect(await sql`SELECT status, last_error FROM messaging.inbox`).toEqual([
      { status: "failed", last_error: "gave up: \uFFFD" },
    ]);
  });

  it("keeps the saved reply and sent parts for the next attempt", async () => {
    await store.insert("whatsapp", [message("progress")]);
    const [claimed] = await store.claim("whatsapp", 1, 60_000);
    if (!claimed) throw new Error("nothing claimed");
    expect(await store.saveReply(claimed, ["one", "two"], 60_000)).toBe(true);
    expect(await store.markPartsSent(claimed, 1, 60_000)).toBe(true);
    expect(await store.retryLater(claimed, "boom", 0)).toBe(true);
    const [again] = await store.claim("whatsapp", 1, 60_000);
    expect(again).toMatchObject({ replyParts: ["one", "two"], partsSent: 1, lastError: "boom", attempts: 2 });
    if (!again) return;
    expect(await store.renewLease(again, 60_000)).toBe(true);
    expect(await store.markDone(again, 2)).toBe(true);
    expect(await sql`SELECT status, parts_sent, lease_id FROM messaging.inbox`).toEqual([
      { status: "done", parts_sent: 2, lease_id: null },
    ]);
  });

  it("relaxes the flush of the claim's own transaction only: the connection's next commit waits for its flush", async () => {
    // One connection, so the statements after the claim run in the session that made it.
    const session = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const claiming = new InboxStore(session);
      await claiming.insert("whatsapp", [message("relaxed")]);
      expect(await claiming.claim("whatsapp", 1, 60_000)).toHaveLength(1);
      expect(await session`SHOW synchronous_commit`).toEqual([{ synchronous_commit: "on" }]);
    } finally {
      await session.end();
    }
  });

  it("hands a worker only its own channel's rows", async () => {
    await store.insert("telegram", [message("elsewhere")]);
    expect(await store.claim("whatsapp", 10, 60_000)).toEqual([]);
    expect(await store.claim("telegram", 10, 60_000)).toEqual([
      expect.objectContaining({ messageId: "elsewhere" }),
    ]);
  });

  it("does not hand out a row before its retry time", async () => {
    await store.insert("whatsapp", [message("later")]);
    const [claimed] = await store.claim("whatsapp", 1, 60_000);
    if (!claimed) throw new Error("nothing claimed");
    await store.retryLater(claimed, "try later", 60_000);
    expect(await store.claim("whatsapp", 1, 60_000)).toEqual([]);
    expect(await store.list("whatsapp", "pending", 10)).toEqual([
      expect.objectContaining({ message_id: "later", last_error: "try later", attempts: 1 }),
    ]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)("inbox store on PostgreSQL with concurrent workers", () => {
  it("gives concurrent claimers disjoint rows (SKIP LOCKED) and every row to someone", async () => {
    const database = await freshPostgres();
    const pools = [connect(database), connect(database), connect(database)];
    try {
      await Promise.all(pools.map((pool) => migrateInbox(pool, logger)));
      const stores = pools.map((pool) => new InboxStore(pool));
      const ids = Array.from({ length: 300 }, (_, i) => `m${i}`);
      await stores[0]?.insert("whatsapp", ids.map(message));
      const claimedBy = await Promise.all(
        stores.map(async (store) => {
          const mine: string[] = [];
          for (;;) {
            const batch = await Promise.all([
              store.claim("whatsapp", 7, 60_000),
              store.claim("whatsapp", 7, 60_000),
            ]);
            const rows = batch.flat();
            if (rows.length === 0) return mine;
            mine.push(...rows.map((row) => row.messageId));
          }
        }),
      );
      const all = claimedBy.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(all.sort()).toEqual([...ids].sort());
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await database.drop();
    }
  });
});
