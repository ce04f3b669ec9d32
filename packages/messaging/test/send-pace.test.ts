import pino from "pino";
import type postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrateInbox } from "../src/inbox/schema.js";
import { type PaceAttempt, type PacePermits, SendPace } from "../src/inbox/send-pace.js";
import { InboxStore } from "../src/inbox/store.js";
import {
  connect,
  DATABASES,
  freshPostgres,
  TEST_DATABASE_URL,
  type TestDatabase,
} from "./support/database.js";

const logger = pino({ level: "silent" });
const HOLD_MS = 5_000;
const chat = (key = "whatsapp:1:4915550001", gapMs = 300) => ({ key, permits: 1, gapMs });
const account = (permits: number, key = "whatsapp:1") => ({ key, permits, gapMs: 1_000 });

function permitsOf(attempt: PaceAttempt): PacePermits {
  if (!("permits" in attempt)) throw new Error(`expected permits, got a wait of ${attempt.waitMs} ms`);
  return attempt.permits;
}
function waitOf(attempt: PaceAttempt): number {
  if ("permits" in attempt) throw new Error("expected a wait, got permits");
  return attempt.waitMs;
}

describe.each(DATABASES)("send permits on $name", ({ fresh }) => {
  let database: TestDatabase;
  let sql: postgres.Sql;
  let pace: SendPace;
  beforeEach(async () => {
    database = await fresh();
    sql = connect(database);
    await migrateInbox(sql, logger);
    pace = new SendPace(sql);
  });
  afterEach(async () => {
    await sql.end();
    await database.drop();
  });

  it("a chat's next send waits its gap from the end of the previous one, not from its start", async () => {
    const first = permitsOf(await pace.take([chat()], HOLD_MS));
    // Held for the send's timeout plus the gap while the send is in flight.
    expect(waitOf(await pace.take([chat()], HOLD_MS))).toBeGreaterThan(HOLD_MS);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await pace.release(first);
    const wait = waitOf(await pace.take([chat()], HOLD_MS));
    expect(wait).toBeGreaterThan(200);
    expect(wait).toBeLessThanOrEqual(300);
    await new Promise((resolve) => setTimeout(resolve, wait + 20));
    permitsOf(await pace.take([chat()], HOLD_MS));
    // Another chat of the same account is not held up.
    permitsOf(await pace.take([chat("whatsapp:1:4915550002")], HOLD_MS));
  });

  it("an account has as many permits as its rate, each free a second after its send ended", async () => {
    const taken = [];
    for (let index = 0; index < 3; index++) taken.push(permitsOf(await pace.take([account(3)], HOLD_MS)));
    expect(waitOf(await pace.take([account(3)], HOLD_MS))).toBeGreaterThan(HOLD_MS);
    await pace.release(taken[0] as PacePermits);
    const wait = waitOf(await pace.take([account(3)], HOLD_MS));
    expect(wait).toBeGreaterThan(900);
    expect(wait).toBeLessThanOrEqual(1_000);
  });

  it("takes all of a send's permits or none: a full account gives the chat's back at once", async () => {
    permitsOf(await pace.take([account(1)], HOLD_MS));
    expect(waitOf(await pace.take([chat(), account(1)], HOLD_MS))).toBeGreaterThan(HOLD_MS);
    // The chat's permit was given back free: a send to it from another account goes now.
    permitsOf(await pace.take([chat()], HOLD_MS));
  });

  it("every permit of an account is found, wherever a take's search starts, and not one more", async () => {
    for (const permits of [1, 2, 3, 5, 8]) {
      for (let round = 0; round < 3; round++) {
        const limit = account(permits, `whatsapp:matrix:${permits}:${round}`);
        const slots = new Set<number>();
        for (let index = 0; index < permits; index++) {
          for (const each of permitsOf(await pace.take([limit], HOLD_MS)).taken) slots.add(each.slot);
        }
        expect([...slots].sort((a, b) => a - b)).toEqual(Array.from({ length: permits }, (_, i) => i));
        expect(waitOf(await pace.take([limit], HOLD_MS))).toBeGreaterThan(HOLD_MS);
      }
    }
  });

  it("a send refused by two limits waits for the later of them", async () => {
    await pace.release(permitsOf(await pace.take([chat(), account(1)], HOLD_MS)));
    // The chat is free 300 ms after the release and the account 1 s after: the take waits for both.
    const wait = waitOf(await pace.take([chat(), account(1)], HOLD_MS));
    expect(wait).toBeGreaterThan(800);
    expect(wait).toBeLessThanOrEqual(1_000);
  });

  it("a rate limit's Retry-After keeps the permits for at least that long", async () => {
    await pace.release(permitsOf(await pace.take([chat(), account(2)], HOLD_MS)), 5_000);
    expect(waitOf(await pace.take([chat()], HOLD_MS))).toBeGreaterThan(4_800);
  });

  it("a release by a send whose permit expired and was taken again leaves the new holder's alone", async () => {
    const stale = permitsOf(await pace.take([chat("k", 0)], 0));
    await new Promise((resolve) => setTimeout(resolve, 20));
    permitsOf(await pace.take([chat("k", 0)], HOLD_MS));
    await pace.release(stale);
    expect(waitOf(await pace.take([chat("k", 0)], HOLD_MS))).toBeGreaterThan(HOLD_MS - 100);
  });

  it("erasing a conversation deletes its chat's pace, which holds the address", async () => {
    const store = new InboxStore(sql);
    const session = "whatsapp:1:4915550001";
    await pace.release(permitsOf(await pace.take([chat(session), account(2)], HOLD_MS)));
    await store.erase("whatsapp", session);
    const keys = await sql<{ key: string }[]>`SELECT DISTINCT key FROM messaging.send_pace ORDER BY key`;
    expect(keys.map((row) => row.key)).toEqual(["whatsapp:1"]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)("send permits under contention (PostgreSQL)", () => {
  it("of 40 takes at once over 4 connections, exactly as many as there are permits succeed, new keys or not", async () => {
    const database = await freshPostgres();
    const clients = Array.from({ length: 4 }, () => connect(database));
    try {
      await migrateInbox(clients[0] as postgres.Sql, logger);
      // A key's first takes find no permit rows and make them while the others look: each must still see the
      // permits the others made, not answer a wait while one is free. Then the same keys again, rows made.
      for (const round of ["new", "made"]) {
        for (const permits of [1, 2, 3, 5, 8]) {
          const limit = { key: `race:${permits}`, permits, gapMs: 0 };
          const attempts = await Promise.all(
            Array.from({ length: 40 }, (_, index) =>
              new SendPace(clients[index % clients.length] as postgres.Sql).take([limit], HOLD_MS),
            ),
          );
          const taken = attempts.flatMap((attempt) => ("permits" in attempt ? [attempt.permits] : []));
          expect(taken, `${round} key, ${permits} permits`).toHaveLength(permits);
          await Promise.all(
            taken.map((permits) => new SendPace(clients[0] as postgres.Sql).release(permits)),
          );
        }
      }
    } finally {
      await Promise.all(clients.map((client) => client.end()));
      await database.drop();
    }
  });
});
