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
   * Takes one permit of every limit, or none: when one is not free, the ones taken are given back at once and
   * the answer is how long until the missing one may be free.
   */
  async take(limits: readonly PaceLimit[], holdMs: number): Promise<PaceAttempt> {
    const token = randomUUID();
    const taken: PacePermits["taken"] = [];
    for (const limit of limits) {
      const outcome = await this.takeOne(limit, token, holdMs + limit.gapMs);
      if ("waitMs" in outcome) {
        // Freed as if never taken: the permit was free when taken, so "now" is no earlier than its last gap's end.
        await this.release({ token, taken: taken.map((each) => ({ ...each, gapMs: 0 })) });
        return outcome;
      }
      taken.push({ key: limit.key, slot: outcome.slot, gapMs: limit.gapMs });
    }
    return { permits: { token, taken } };
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

  /** The slot taken, or the milliseconds until one may be free. */
  private async takeOne(
    limit: PaceLimit,
    token: string,
    holdMs: number,
  ): Promise<{ slot: number } | { waitMs: number }> {
    for (let round = 0; round < 2; round++) {
      const [row] = await this.sql<{ slot: number | null; slots: number; wait_ms: number | null }[]>`
        WITH taken AS (
          UPDATE messaging.send_pace p
          SET free_at = clock_timestamp() + ${holdMs}::float8 * interval '1 millisecond', holder = ${token}::uuid
          WHERE (p.key, p.slot) = (
            SELECT key, slot FROM messaging.send_pace
            WHERE key = ${limit.key} AND slot < ${limit.permits} AND free_at <= clock_timestamp()
            ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING p.slot)
        SELECT (SELECT slot FROM taken) AS slot,
               (SELECT count(*)::int FROM messaging.send_pace WHERE key = ${limit.key} AND slot < ${limit.permits}) AS slots,
               (SELECT extract(epoch FROM min(free_at) - clock_timestamp())::float8 * 1000
                FROM messaging.send_pace WHERE key = ${limit.key} AND slot < ${limit.permits}) AS wait_ms`;
      if (row === undefined) throw new Error("send pacing: no answer");
      if (row.slot !== null) return { slot: row.slot };
      if (row.slots >= limit.permits) return { waitMs: Math.max(Math.ceil(row.wait_ms ?? 0), BUSY_RETRY_MS) };
      // First send under this key (or more permits configured than before): make its permits, free now.
      await this.sql`
        INSERT INTO messaging.send_pace (key, slot, free_at)
        SELECT ${limit.key}, slot, clock_timestamp() FROM generate_series(0, ${limit.permits - 1}::int) AS slot
        ON CONFLICT DO NOTHING`;
    }
    return { waitMs: BUSY_RETRY_MS };
  }
}
