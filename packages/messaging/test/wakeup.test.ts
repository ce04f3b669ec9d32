import pino from "pino";
import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { whatsapp } from "../src/channels/whatsapp/index.js";
import { migrateInbox } from "../src/inbox/schema.js";
import { InboxStore } from "../src/inbox/store.js";
import { INBOX_NOTIFY_CHANNEL, InboxWakeup } from "../src/inbox/wakeup.js";
import { createMessaging } from "../src/messaging.js";
import { startGraphStub, waitFor } from "./support/api-stubs.js";
import { connect, freshPostgres, TEST_DATABASE_URL, type TestDatabase } from "./support/database.js";
import { textMessage } from "./support/messages.js";

const logger = pino({ level: "silent" });

const message = (id: string) => textMessage(id, { accountId: "1", from: "4915550001" });

// LISTEN/NOTIFY between processes: each pool here stands for a process of its own on the shared PostgreSQL.
// Listening sessions are looked up in the test's own database: other tests and benchmarks listen meanwhile.
describe.skipIf(!TEST_DATABASE_URL)("inbox wake-up across processes (LISTEN/NOTIFY, PostgreSQL)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups.length = 0;
  });

  async function database(): Promise<{ db: TestDatabase; writer: InboxStore }> {
    const db = await freshPostgres();
    cleanups.push(() => db.drop());
    const sql = connect(db);
    cleanups.push(() => sql.end({ timeout: 1 }));
    await migrateInbox(sql, logger);
    return { db, writer: new InboxStore(sql) };
  }

  it("wakes with the channel of rows another process committed, and LISTENs again after losing its connection", async () => {
    const { db, writer } = await database();
    const listenerPool = connect(db);
    cleanups.push(() => listenerPool.end({ timeout: 1 }));
    const woken: (string | undefined)[] = [];
    const wakeup = new InboxWakeup({
      sql: listenerPool,
      onWake: (channel) => woken.push(channel),
      logger,
      retryMs: 50,
    });
    cleanups.push(() => wakeup.close());
    await wakeup.start();
    // After (re)connecting it wakes everyone once: notifications may have been missed meanwhile.
    expect(woken).toEqual([undefined]);

    await writer.insert("whatsapp", [message("first")]);
    await waitFor("the first notification", () => woken.length === 2);
    expect(woken[1]).toBe("whatsapp");
    // All duplicates: nothing new, no notification (checked after a later one arrives).
    await writer.insert("whatsapp", [message("first")]);

    const admin = postgres(db.url, { max: 1, onnotice: () => {} });
    cleanups.push(() => admin.end());
    const [listening] = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND query = ${`LISTEN "${INBOX_NOTIFY_CHANNEL}"`}`;
    expect(listening).toBeDefined();
    await admin`SELECT pg_terminate_backend(${listening?.pid ?? 0})`;
    await waitFor("the LISTEN again", () => woken.length === 3);
    expect(woken[2]).toBeUndefined();

    await writer.insert("telegram", [message("second")]);
    await waitFor("a notification on the new connection", () => woken.length === 4);
    expect(woken).toEqual([undefined, "whatsapp", undefined, "telegram"]);
  });

  it("gets a message to an idle worker that only a notification can wake (its poll is an hour away)", async () => {
    const { db, writer } = await database();
    const graph = await startGraphStub();
    cleanups.push(() => graph.close());
    const workerPool = connect(db);
    cleanups.push(() => workerPool.end({ timeout: 1 }));
    const messaging = await createMessaging({
      sql: workerPool,
      channels: [whatsapp({ appSecret: "s", accessToken: "a", phoneNumberId: "1", apiBaseUrl: graph.url })],
      logger,
      worker: { pollMs: 3_600_000 },
      listen: true,
    });
    messaging.start();
    cleanups.push(() => messaging.stop());
    // Its first look at the inbox (on start and after LISTEN is in place) found nothing.
    await waitFor("the LISTEN", async () => {
      const rows = await workerPool<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND query = ${`LISTEN "${INBOX_NOTIFY_CHANNEL}"`}`;
      return rows[0]?.n === 1;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));

    await writer.insert("whatsapp", [message("woken")]);
    await waitFor("the reply", () => graph.accepted().length === 1);
    expect(graph.accepted()[0]?.body.text?.body).toBe("woken");
  });
});
