import { randomUUID } from "node:crypto";
import type { Sql } from "postgres";

/** One limit to take a permit of: `permits` sends at once, each permit free again `gapMs` after its send ended. */
export interface PaceLimit {
  key: string;
  permits: number;
  gapMs: number;
}

/** Permits taken for one send; give them back with `SendPace.release`. */
export interface PacePermits {
  token: string;
  taken: { key: string; slot: number; gapMs: number }[];
}

/** The answer of `take`: the permits, or how long until one may be free. */
export type PaceAttempt = { permits: PacePermits } | { waitMs: number };

/** A permit another process is taking right now (skipped, locked) is looked at again this soon. */
const BUSY_RETRY_MS = 10;
/** Takes one `take` tries before answering a wait: the permits it counted may be free since it looked. */
const TAKE_ROUNDS = 3;

/**
 * Send pacing shared by every process through PostgreSQL (`messaging.send_pace`). A limit is a set of permits
 * (rows `key`, `slot` 0..permits-1) each with the time it is free again. A send takes one permit of each of its
 * limits in one atomic statement (the row locked with SKIP LOCKED, so two processes never take the same one),
 * holding it for the send's timeout plus the gap; when the send ends, the permit is freed `gapMs` after that end.
 * So for a chat (1 permit, gap = the chat's interval) the next message starts only after the previous one was
 * answered plus the interval: it cannot arrive closer, whatever the network did. For an account (N permits, gap
 * 1 s) any N+1 sends that arrive within one second would need N+1 permits held at one instant: at most N do.
 * Times are the database's clock, the one clock every process shares. A process that dies holding a permit
 * leaves it to expire after the send's timeout plus the gap.
 */
export class SendPace {
  constructor(private readonly sql: Sql) {}

  /**
   * Takes one permit of every limit, or none, in one statement: when one is not free, none is taken and the
   * answer is how long until every limit may have one free.
   */
  async take(limits: readonly PaceLimit[], holdMs: number): Promise<PaceAttempt> {
    const token = randomUUID();
    const keys = limits.map((limit) => limit.key);
    const permits = limits.map((limit) => limit.permits);
    const holds = limits.map((limit) => holdMs + limit.gapMs);
    for (let round = 0; round < TAKE_ROUNDS; round++) {
      // Each limit's search starts at a random slot (wrapping round once): from slot 0, every take of a busy
      // account would first walk past the permits still held, hundreds of rows at a high rate.
      const starts = permits.map((count) => Math.floor(Math.random() * count));
      const taken = await this.sql<{ key: string; slot: number }[]>`
        WITH want AS (
          SELECT * FROM unnest(${keys}::text[], ${permits}::int[], ${holds}::float8[], ${starts}::int[])
            AS w(key, permits, hold, start)),
        picked AS (
          SELECT w.key, w.hold, coalesce(
            (SELECT p.slot FROM messaging.send_pace p
             WHERE p.key = w.key AND p.slot >= w.start AND p.slot < w.permits AND p.free_at <= clock_timestamp()
             ORDER BY p.slot LIMIT 1 FOR UPDATE SKIP LOCKED),
            (SELECT p.slot FROM messaging.send_pace p
             WHERE p.key = w.key AND p.slot < w.start AND p.free_at <= clock_timestamp()
             ORDER BY p.slot LIMIT 1 FOR UPDATE SKIP LOCKED)) AS slot
          FROM want w)
        UPDATE messaging.send_pace p
        SET free_at = clock_timestamp() + k.hold * interval '1 millisecond', holder = ${token}::uuid
        FROM picked k
        WHERE p.key = k.key AND p.slot = k.slot AND (SELECT count(slot) FROM picked) = ${limits.length}
        RETURNING p.key, p.slot`;
      if (taken.length === limits.length) {
        const gapOf = new Map(limits.map((limit) => [limit.key, limit.gapMs]));
        return {
          permits: {
            token,
            taken: taken.map((row) => ({ key: row.key, slot: row.slot, gapMs: gapOf.get(row.key) ?? 0 })),
          },
        };
      }
      // Not taken (the rows locked by the search are free again with the statement's end): how long until
      // every limit has a permit free, making the permits of a key seen for the first time.
      const seen = await this.sql<{ slots: number; permits: number; wait_ms: number | null }[]>`
        WITH want AS (SELECT * FROM unnest(${keys}::text[], ${permits}::int[]) AS w(key, permits)),
        seen AS (
          SELECT w.key, w.permits, count(p.slot)::int AS slots,
                 extract(epoch FROM min(p.free_at) - clock_timestamp())::float8 * 1000 AS wait_ms
          FROM want w LEFT JOIN messaging.send_pace p ON p.key = w.key AND p.slot < w.permits
          GROUP BY w.key, w.permits),
        made AS (
          INSERT INTO messaging.send_pace (key, slot, free_at)
          SELECT s.key, n, clock_timestamp() FROM seen s, generate_series(0, s.permits - 1) AS n
          WHERE s.slots < s.permits
          ON CONFLICT DO NOTHING)
        SELECT slots, permits, wait_ms FROM seen`;
      // A key short of permits has them now: look again at once.
      if (seen.some((row) => row.slots < row.permits)) continue;
      const waitMs = Math.max(...seen.map((row) => Math.ceil(row.wait_ms ?? 0)));
      // Every limit has a permit free by now (freed, or made by another process, after the take looked; or one a
      // concurrent take is holding): look again, twice at most.
      if (waitMs <= 0 && round < TAKE_ROUNDS - 1) continue;
      return { waitMs: Math.max(waitMs, BUSY_RETRY_MS) };
    }
    return { waitMs: BUSY_RETRY_MS };
  }

  /** The permits free again `gapMs` (at least `minGapMs`) after now; a permit since expired and taken is left alone. */
  async release(permits: PacePermits, minGapMs = 0): Promise<void> {
    if (permits.taken.length === 0) return;
    const keys = permits.taken.map((each) => each.key);
    const slots = permits.taken.map((each) => each.slot);
    const gaps = permits.taken.map((each) => Math.max(each.gapMs, minGapMs));
    await this.sql`
      UPDATE messaging.send_pace p
      SET free_at = clock_timestamp() + g.gap * interval '1 millisecond', holder = NULL
      FROM (SELECT unnest(${keys}::text[]) AS key, unnest(${slots}::int[]) AS slot,
                   unnest(${gaps}::float8[]) AS gap) g
      WHERE p.key = g.key AND p.slot = g.slot AND p.holder = ${permits.token}::uuid`;
  }
}
