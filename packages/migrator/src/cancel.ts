import postgres from "postgres";
import type { AnySql } from "./types.js";

/** How often a stopped run's statement is cancelled again: a migration may start another one meanwhile. */
const CANCEL_EVERY_MS = 100;

/**
 * Cancels whatever backend `pid` runs from the moment `signal` is aborted until `stop()`: `pg_cancel_backend`
 * on a connection of its own, opened with the pool's options (the pool may have no free connection), again
 * every 100 ms, since a migration with several statements starts the next one. A cancel that reaches an
 * idle backend is ignored by PostgreSQL, so the run's own rollback and unlock, sent after `stop()`, are
 * never cut short. Never throws: a cancel that cannot be sent leaves the statement to finish.
 *
 * A pool with its own `socket` factory (PGlite in this process, `@agent-platform/embedded-postgres`) gets
 * no cancels: its statements run in this process, which a second client of the single PGlite session could
 * only disturb, and they end with it.
 */
export function cancelOnAbort(pool: AnySql, pid: number, signal: AbortSignal | undefined) {
  if ((pool.options as { socket?: unknown }).socket !== undefined) signal = undefined;
  let stopped = false;
  let side: postgres.Sql | null = null;
  let timer: NodeJS.Timeout | undefined;
  let inflight: Promise<unknown> = Promise.resolve();

  const cancel = () => {
    if (stopped) return;
    side ??= postgres({
      ...pool.options,
      max: 1,
      onnotice: () => {},
      debug: false,
    } as unknown as postgres.Options<Record<string, never>>);
    const client = side;
    inflight = inflight
      .then(() => (stopped ? null : client`select pg_cancel_backend(${pid})`))
      .catch(() => {});
    timer = setTimeout(cancel, CANCEL_EVERY_MS);
  };
  const onAbort = () => cancel();
  if (signal?.aborted) cancel();
  else signal?.addEventListener("abort", onAbort, { once: true });

  return {
    /** No more cancels; resolves once the last one sent has been answered. */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      await inflight;
      await side?.end({ timeout: 1 }).catch(() => {});
    },
  };
}
