import type postgres from "postgres";
import { LockTimeoutError } from "./errors.js";
import type { HistoryTable } from "./history.js";
import { abortableSleep } from "./retry.js";
import type { AnySql } from "./types.js";

// The two-key advisory lock space: a fixed namespace for this package, then the history table's name.
const NAMESPACE = "@agent-platform/migrator";
const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 250;

/**
 * Reserves one connection of the pool, waiting at most until `deadline` (epoch ms). A reservation that
 * arrives after the deadline is handed back at once, so a timed-out caller never keeps a connection.
 */
export async function reserveConnection(
  sql: AnySql,
  deadline: number,
  timeoutMs: number,
  signal?: AbortSignal,
) {
  const pending = sql.reserve();
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const timedOut = new Promise<"timeout" | "aborted">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), Math.max(0, deadline - Date.now()));
    onAbort = () => resolve("aborted");
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const winner = await Promise.race([pending, timedOut]);
    if (winner === "timeout" || winner === "aborted") {
      pending.then((connection) => connection.release()).catch(() => {});
      throw new LockTimeoutError(timeoutMs);
    }
    return winner;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Takes the session-level advisory lock for `where` on `connection`, polling until `deadline`.
 * Returns how long it waited, and the backend's pid (for watching its lock waits, see `lock-wait.ts`). Session-level, so it survives the run's commits and is released by
 * `releaseLock` or, if the process dies, by the server when the connection drops.
 */
export async function acquireLock(
  connection: postgres.ISql,
  where: HistoryTable,
  deadline: number,
  timeoutMs: number,
  onWait: () => void,
  signal?: AbortSignal,
): Promise<{ waitedMs: number; pid: number }> {
  const started = Date.now();
  const key = `${where.schema}.${where.table}`;
  let delay = FIRST_RETRY_MS;
  for (let attempt = 0; ; attempt++) {
    const [row] = await connection<{ locked: boolean; pid: number }[]>`
      select pg_try_advisory_lock(hashtext(${NAMESPACE}), hashtext(${key})) as locked, pg_backend_pid() as pid`;
    if (row?.locked) return { waitedMs: Date.now() - started, pid: row.pid };
    if (attempt === 0) onWait();
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new LockTimeoutError(timeoutMs);
    // Jitter keeps several waiters from polling in lockstep.
    await abortableSleep(Math.min(remaining, delay * (0.5 + Math.random())), signal);
    delay = Math.min(MAX_RETRY_MS, delay * 2);
  }
}

export async function releaseLock(connection: postgres.ISql, where: HistoryTable): Promise<void> {
  const key = `${where.schema}.${where.table}`;
  await connection`select pg_advisory_unlock(hashtext(${NAMESPACE}), hashtext(${key}))`;
}

/** The session holding the migration lock of `where`: a run in progress. */
export interface LockHolder {
  /** Backend pid of the session holding it. */
  readonly pid: number;
  /**
   * When that session's current transaction started or, between two (a retry's wait), when its last
   * statement ended: the run has held the lock at least since then. `null` when the server does not say.
   */
  readonly since: Date | null;
}

/** Who holds the migration lock of `where` now, from pg_locks: `null` when no run holds it. */
export async function lockHolder(
  sql: postgres.ISql | AnySql,
  where: HistoryTable,
): Promise<LockHolder | null> {
  const key = `${where.schema}.${where.table}`;
  // The two-key form of pg_advisory_lock shows in pg_locks as classid/objid with objsubid 2, as unsigned oids.
  const [row] = await (sql as postgres.ISql)<{ pid: number; since: Date | null }[]>`
    select l.pid, coalesce(a.xact_start, a.state_change) as since
    from pg_catalog.pg_locks l left join pg_catalog.pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objsubid = 2
      and l.classid = (hashtext(${NAMESPACE})::bigint & 4294967295)::oid
      and l.objid = (hashtext(${key})::bigint & 4294967295)::oid
    limit 1`;
  return row ? { pid: row.pid, since: row.since } : null;
}
