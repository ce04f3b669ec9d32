import type postgres from "postgres";
import { cancelOnAbort } from "./cancel.js";
import { isConnectionLost } from "./connection-lost.js";
import { DdlLockTimeoutError, MigrationAbortedError, MigrationFailedError } from "./errors.js";
import type { HistoryTable } from "./history.js";
import { invalidIndexes } from "./indexes.js";
import { type LockWait, watchLockWaits } from "./lock-wait.js";
import type { CheckedMigration } from "./migration-list.js";
import type { Plan } from "./plan.js";
import { type RetryPolicy, withRetry } from "./retry.js";
import { runSegmentOnce, type Segment, SegmentFailure, segmentsOf } from "./segment.js";
import type { AnySql, MigrationDirection, MigratorEvent, SegmentAttempt, SegmentReport } from "./types.js";

type Connection = postgres.ISql;

export interface RunOptions {
  readonly connection: Connection;
  readonly where: HistoryTable;
  /** Whether the history table existed when the run read it under the lock. */
  readonly historyExists: boolean;
  readonly plan: Plan;
  readonly log: (event: MigratorEvent) => void;
  /** `lock_timeout` of each transaction (0: none). */
  readonly ddlLockTimeoutMs: number;
  /** `statement_timeout` of each transaction; `undefined` leaves the session's own. */
  readonly statementTimeoutMs: number | undefined;
  /** Called when the run's own connection turns out to be gone: nothing more may be sent on it. */
  readonly onConnectionLost: () => void;
  readonly retry: RetryPolicy;
  /** `statement_timeout` of each concurrent index build (0: none). */
  readonly indexBuildTimeoutMs: number;
  /** The pool the run's connection came from and that connection's backend pid: to watch its lock waits. */
  readonly pool: AnySql;
  readonly pid: number;
  /** Aborted: the running statement has been cancelled (see `cancel.ts`); nothing more is started. */
  readonly signal: AbortSignal | undefined;
}

// SQLSTATE lock_not_available: a lock_timeout expired (or a NOWAIT lock was refused).
const LOCK_NOT_AVAILABLE = "55P03";

/** A failed attempt with what the run learned about it. */
class AttemptError extends Error {
  constructor(
    readonly failure: SegmentFailure,
    readonly waited: LockWait | null,
    readonly invalid: string[],
  ) {
    super(failure.message, { cause: failure.cause });
  }
  get lockTimeout(): boolean {
    return (this.failure.cause as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;
  }
}

/**
 * Executes a plan on the locked connection, one segment after the other (see `segment.ts`): each attempt
 * of a transactional segment that hit its lock timeout was rolled back whole, so retrying it is running it
 * again. Returns each segment with its attempts.
 */
export async function runPlan(options: RunOptions): Promise<SegmentReport[]> {
  const { connection, where, plan, log, signal } = options;
  const direction = plan.direction as MigrationDirection;
  const history = { exists: options.historyExists, older: options.historyExists };
  const statementTimeout =
    options.statementTimeoutMs === undefined ? null : String(options.statementTimeoutMs);
  const committed: string[] = [];
  const reports: SegmentReport[] = [];
  let lostConnection = false;

  /** Undoes what a failed attempt left on the run's connection; lists the INVALID indexes a non-transactional one left. */
  const recover = async (transactional: boolean): Promise<string[]> => {
    try {
      if (transactional) {
        await connection`rollback`;
        return [];
      }
      await connection`reset search_path`;
      return await invalidIndexes(connection, where.schema);
    } catch (error) {
      // Only a query of the run's own failing here says its connection is gone (a step's error may come
      // from any connection the migration used).
      if (isConnectionLost(error)) {
        lostConnection = true;
        options.onConnectionLost();
      }
      return [];
    }
  };

  /** One attempt: the segment, its lock wait watched so a timeout can name the relation. */
  const attempt = async (segment: Segment, attempts: SegmentAttempt[]) => {
    if (signal?.aborted) throw signal.reason;
    const started = performance.now();
    const { ddlLockTimeoutMs } = options;
    const watch =
      segment.transactional && ddlLockTimeoutMs > 0
        ? watchLockWaits(options.pool, options.pid, Math.ceil(ddlLockTimeoutMs / 2))
        : null;
    const canceller = cancelOnAbort(options.pool, options.pid, signal);
    try {
      await runSegmentOnce(
        segment,
        {
          connection,
          where,
          direction,
          log,
          ddlLockTimeoutMs,
          statementTimeout,
          retry: options.retry,
          indexBuildTimeoutMs: options.indexBuildTimeoutMs,
          signal,
        },
        history,
      );
      await canceller.stop();
      watch?.stop();
      attempts.push({ outcome: "committed", durationMs: performance.now() - started, relation: null });
    } catch (error) {
      // Cancels stop before the rollback is sent, so the rollback itself is never cancelled.
      await canceller.stop();
      const waited = watch?.stop() ?? null;
      const failure =
        error instanceof SegmentFailure
          ? error
          : new SegmentFailure(segment.steps[segment.steps.length - 1] as CheckedMigration, error);
      const invalid = await recover(segment.transactional);
      const failed = new AttemptError(failure, waited, invalid);
      attempts.push({
        outcome: signal?.aborted ? "aborted" : failed.lockTimeout ? "lock_timeout" : "failed",
        durationMs: performance.now() - started,
        relation: waited?.relation ?? null,
      });
      throw failed;
    }
  };

  for (const segment of segmentsOf(plan.steps)) {
    const attempts: SegmentAttempt[] = [];
    reports.push({ versions: [...segment.versions], transactional: segment.transactional, attempts });
    try {
      await withRetry(options.retry, () => attempt(segment, attempts), {
        signal,
        // Only a transaction that waited too long for a lock is retried, on a connection still there.
        retryable: (error) =>
          error instanceof AttemptError &&
          error.lockTimeout &&
          segment.transactional &&
          !lostConnection &&
          !signal?.aborted,
        onRetry: ({ attempt: n, error, delayMs }) => {
          const failed = error as AttemptError;
          log({
            level: "warn",
            event: "retry",
            version: failed.failure.entry.version.text,
            versions: [...segment.versions],
            attempt: n,
            attempts: options.retry.attempts,
            delayMs,
            relation: failed.waited?.relation ?? null,
            blockers: failed.waited?.blockers ?? [],
          });
        },
      });
    } catch (error) {
      throw stepError(error, { segment, attempts, committed, direction, options });
    }
    committed.push(...segment.versions);
    log({ level: "info", event: "committed", versions: [...segment.versions] });
  }
  return reports;
}

/** The error a run throws for a segment that failed for good (or was stopped). */
function stepError(
  error: unknown,
  run: {
    segment: Segment;
    attempts: SegmentAttempt[];
    committed: string[];
    direction: MigrationDirection;
    options: RunOptions;
  },
): Error {
  const { segment, committed, direction, options } = run;
  const failed = error instanceof AttemptError ? error : null;
  const entry = failed?.failure.entry ?? segment.steps[0];
  const version = entry?.version.text ?? "";
  const cause = failed ? failed.failure.cause : error;
  const failure = {
    version,
    name: entry?.name ?? "",
    direction,
    committed: [...committed],
    invalidIndexes: failed?.invalid ?? [],
    cause,
  };
  if (options.signal?.aborted) {
    options.log({ level: "warn", event: "aborted", version, direction });
    return new MigrationAbortedError(failure);
  }
  options.log({
    level: "error",
    event: "failed",
    version,
    direction,
    message: cause instanceof Error ? cause.message : String(cause),
  });
  if (failed?.lockTimeout) {
    const { ddlLockTimeoutMs } = options;
    return new DdlLockTimeoutError({
      ...failure,
      timeoutMs: segment.transactional && ddlLockTimeoutMs > 0 ? ddlLockTimeoutMs : null,
      relation: failed.waited?.relation ?? null,
      attempts: run.attempts.length,
    });
  }
  return new MigrationFailedError(failure);
}
