import type postgres from "postgres";
import { reserveConnection } from "./lock.js";
import type { AnySql } from "./types.js";

/** A lock the run's backend was seen waiting for: the relation, and the sessions in its way. */
export interface LockWait {
  readonly relation: string;
  readonly blockers: number[];
}

/**
 * Watches the run's backend (`pid`) from another pool connection while a transaction runs, so a lock
 * timeout can name the relation it waited for: PostgreSQL's error does not. Samples every `everyMs` (half
 * the lock timeout, so any full wait is seen at least once); nothing is asked of the pool before the first
 * sample, and a pool with no free connection (a pool of one) just leaves the relation unknown. Never
 * throws: watching must not change the run.
 */
export function watchLockWaits(pool: AnySql, pid: number, everyMs: number): { stop(): LockWait | null } {
  let seen: LockWait | null = null;
  let stopped = false;
  let side: postgres.ReservedSql | null = null;
  let reserving: Promise<void> | null = null;
  let inflight: Promise<void> | null = null;

  const sample = async () => {
    try {
      if (!side && !reserving) {
        reserving = reserveConnection(pool, Date.now() + everyMs, everyMs).then(
          (connection) => {
            if (stopped) connection.release();
            else side = connection;
          },
          () => {},
        );
      }
      await reserving;
      if (!side || stopped) return;
      const [row] = await side<{ relation: string; blockers: number[] }[]>`
        select format('%I.%I', n.nspname, c.relname) as relation, pg_blocking_pids(${pid}) as blockers
        from pg_catalog.pg_locks l
        join pg_catalog.pg_class c on c.oid = l.relation
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where l.pid = ${pid} and not l.granted and l.locktype = 'relation'
        limit 1`;
      if (row) seen = row;
    } catch {
      // Unknown relation rather than a failed run.
    } finally {
      inflight = null;
    }
  };

  const timer = setInterval(
    () => {
      if (!inflight && !stopped) inflight = sample();
    },
    Math.max(20, everyMs),
  );
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      // A sample in flight finishes on its own; the connection goes back once it is done.
      void Promise.all([reserving, inflight]).then(() => {
        side?.release();
        side = null;
      });
      return seen;
    },
  };
}
