import pino from "pino";
import type postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../src/channel.js";
import { migrateInbox } from "../src/inbox/schema.js";
import { type ClaimedMessage, InboxStore } from "../src/inbox/store.js";
import { connect, DATABASES, type TestDatabase } from "./support/database.js";
import { textMessage } from "./support/messages.js";

const logger = pino({ level: "silent" });
const LEASE = 60_000;

/** Message `id` of conversation `from`, stamped `second` (seconds after a fixed time) when given. */
function inConversation(id: string, from: string, second?: number): InboundMessage {
  return textMessage(id, {
    from,
    ...(second === undefined ? {} : { sentAt: 1_700_000_000_000 + second * 1000 }),
  });
}
const sessionOf = (message: InboundMessage) => `whatsapp:${message.accountId}:${message.from}`;

describe.each(DATABASES)("inbox conversations on $name", ({ fresh }) => {
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

  const insert = (...messages: InboundMessage[]) => store.insert("whatsapp", messages, [], sessionOf);
  const ids = (claimed: ClaimedMessage[]) => claimed.map((row) => row.messageId).sort();
  const claimOrdered = (limit = 100) => store.claim("whatsapp", limit, LEASE, true);

  it("claims only the head of each conversation, by stamp then arrival, and the next once it is done or failed", async () => {
    // One delivery: a1..a3 share a stamp (delivery order decides), b2 is stamped before b1.
    await insert(
      inConversation("a1", "A", 5),
      inConversation("a2", "A", 5),
      inConversation("b1", "B", 9),
      inConversation("a3", "A", 5),
      inConversation("b2", "B", 8),
    );
    const first = await claimOrdered();
    expect(ids(first)).toEqual(["a1", "b2"]);
    expect(await claimOrdered()).toEqual([]);
    const [a1, b2] = first as [ClaimedMessage, ClaimedMessage];
    expect(await store.markDone(a1, 0)).toBe(true);
    expect(ids(await claimOrdered())).toEqual(["a2"]);
    expect(await store.markFailed(b2, "agent said no")).toBe(true);
    expect(ids(await claimOrdered())).toEqual(["b1"]);
  });

  it("holds the next message while the earlier one waits for its retry", async () => {
    await insert(inConversation("a1", "A"), inConversation("a2", "A"));
    const [a1] = await claimOrdered();
    expect(await store.retryLater(a1 as ClaimedMessage, "busy", 60_000)).toBe(true);
    expect(await claimOrdered()).toEqual([]);
    // Unordered claims take the later one at once: what ordering "none" does.
    expect(ids(await store.claim("whatsapp", 10, LEASE, false))).toEqual(["a2"]);
  });

  it("a message arriving late but stamped earlier waits for the one in flight, then goes before the rest", async () => {
    await insert(inConversation("a5", "A", 5), inConversation("a6", "A", 6));
    const [a5] = await claimOrdered();
    await insert(inConversation("a1", "A", 1));
    expect(await claimOrdered()).toEqual([]);
    await store.markDone(a5 as ClaimedMessage, 0);
    expect(ids(await claimOrdered())).toEqual(["a1"]);
  });

  it("reclaims an expired head before anything later of its conversation", async () => {
    await insert(inConversation("a1", "A"), inConversation("a2", "A"));
    await store.claim("whatsapp", 1, 1, true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await claimOrdered();
    expect(ids(again)).toEqual(["a1"]);
    expect(again[0]?.attempts).toBe(2);
  });

  it("concurrent claimers never hold two messages of one conversation", async () => {
    const conversations = 20;
    const perConversation = 5;
    const messages: InboundMessage[] = [];
    for (let m = 0; m < perConversation; m++) {
      for (let c = 0; c < conversations; c++) messages.push(inConversation(`c${c}-m${m}`, `C${c}`, m));
    }
    await insert(...messages);
    const held = new Map<string, string>();
    const order = new Map<string, string[]>();
    const claimers = database.kind === "pglite" ? 1 : 4;
    await Promise.all(
      Array.from({ length: claimers }, async () => {
        for (let round = 0; round < 200; round++) {
          const claimed = await claimOrdered(3);
          if (claimed.length === 0 && held.size === 0) {
            const [{ left }] =
              (await sql`SELECT count(*)::int AS left FROM messaging.inbox WHERE status <> 'done'`) as unknown as [
                { left: number },
              ];
            if (left === 0) return;
          }
          for (const row of claimed) {
            const conversation = row.message.from;
            expect(held.get(conversation)).toBeUndefined();
            held.set(conversation, row.messageId);
            order.set(conversation, [...(order.get(conversation) ?? []), row.messageId]);
          }
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
          for (const row of claimed) {
            held.delete(row.message.from);
            await store.markDone(row, 0);
          }
        }
      }),
    );
    for (let c = 0; c < conversations; c++) {
      expect(order.get(`C${c}`)).toEqual(Array.from({ length: perConversation }, (_, m) => `c${c}-m${m}`));
    }
  });

  it("a stamp that is not a plausible time is ignored: the message is ordered by its arrival, nothing is refused", async () => {
    const odd = [Number.NaN, Number.POSITIVE_INFINITY, 1e300, -5, 0, 1e13, "1700000000" as unknown as number];
    await insert(
      ...odd.map((sentAt, index) => textMessage(`odd${index}`, { from: "O", sentAt })),
      inConversation("late", "O", 0),
    );
    const order: string[] = [];
    for (let round = 0; round < odd.length + 2; round++) {
      const [head] = await claimOrdered();
      if (head === undefined) break;
      order.push(head.messageId);
      await store.markDone(head, 0);
    }
    // The plausible stamp (2023) is earlier than the arrival time the others got.
    expect(order).toEqual(["late", ...odd.map((_, index) => `odd${index}`)]);
  });

  it("rows stored without a session id are not ordered", async () => {
    await store.insert("whatsapp", [inConversation("x1", "X"), inConversation("x2", "X")]);
    expect(ids(await claimOrdered())).toEqual(["x1", "x2"]);
  });
});
