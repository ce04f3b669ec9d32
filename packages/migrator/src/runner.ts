import { setTimeout as sleep } from "node:timers/promises";
import { inSpan } from "@agent-platform/common/internal";
import type postgres from "postgres";
import { type RunnableMigration, Umzug, type UmzugStorage } from "umzug";
import { withIndexBuilds } from "./concurrent-index.js";
import { isConnectionLost } from "./connection-lost.js";
import { DdlLockTimeoutError, MigrationFailedError } from "./errors.js";
import {
  allowNullChecksums,
  createHistory,
  type HistoryRow,
  type HistoryTable,
  writeHistory,
} from "./history.js";
import { invalidIndexes } from "./indexes.js";
import { type LockWait, watchLockWaits } from "./lock-wait.js";
import type { CheckedMigration } from "./migration-list.js";
import type { Plan } from "./plan.js";
import { type RetryPolicy, retryDelayMs } from "./retry.js";
import { MIGRATION_SPAN, migratorTracer } from "./tracing.js";
import type { AnySql, AppliedMigration, MigrationDirection, MigratorEvent } from "./types.js";

type Connection = postgres.ISql;
interface RunContext {
  readonly sql: Connection;
}

/**
 * umzug storage over the history read at the start of the run. Umzug asks it for the executed list
 * before every command and reports each migration; answering from memory and writing the rows in one
 * statement per transaction keeps the run at the migrations' own round trips plus one.
 */
class BufferedHistoryStorage implements UmzugStorage<RunContext> {
  private readonly executedVersions: Set<string>;
  private inserted: HistoryRow[] = [];
  private deleted: string[] = [];
  // A table this run did not create may predate nullable checksums (see `allowNullChecksums`).
  private olderTable: boolean;

  constructor(
    applied: readonly AppliedMigration[] | null,
    private readonly entries: ReadonlyMap<string, CheckedMigration>,
    private readonly durations: ReadonlyMap<string, number>,
  ) {
    this.executedVersions = new Set((applied ?? []).map((row) => row.version));
    this.olderTable = applied !== null;
  }

  async executed(): Promise<string[]> {
    return [...this.executedVersions];
  }

  async logMigration({ name: version }: { name: string }): Promise<void> {
    const entry = this.entries.get(version) as CheckedMigration;
    this.executedVersions.add(version);
    this.inserted.push({
      version,
      name: entry.name,
      checksum: entry.checksum,
      execution_ms: Math.round(this.durations.get(version) ?? 0),
    });
  }

  /** What a rolled-back transaction must forget: the state to go back to before retrying it. */
  checkpoint(): () => void {
    const executed = [...this.executedVersions];
    const inserted = [...this.inserted];
    const deleted = [...this.deleted];
    const olderTable = this.olderTable;
    return () => {
      this.executedVersions.clear();
      for (const version of executed) this.executedVersions.add(version);
      this.inserted = inserted;
      this.deleted = deleted;
      this.olderTable = olderTable;
    };
  }

  async unlogMigration({ name: version }: { name: string }): Promise<void> {
    this.executedVersions.delete(version);
    this.deleted.push(version);
  }

  async flush(sql: Connection, where: HistoryTable): Promise<void> {
    if (this.olderTable && this.inserted.some((row) => row.checksum === null)) {
      await allowNullChecksums(sql, where);
      this.olderTable = false;
    }
    await writeHistory(sql, where, this.inserted, this.deleted);
    this.inserted = [];
    this.deleted = [];
  }
}

/** Consecutive transactional steps share a transaction; a `transaction: false` step stands alone. */
function segments(steps: readonly CheckedMigration[]): CheckedMigration[][] {
  const result: CheckedMigration[][] = [];
  for (const step of steps) {
    const last = result[result.length - 1];
    if (step.transactional && last?.[0]?.transactional) last.push(step);
    else result.push([step]);
  }
  return result;
}

export interface RunOptions {
  readonly connection: Connection;
  readonly where: HistoryTable;
  readonly checked: readonly CheckedMigration[];
  /** The history as read under the lock; `null` when the table does not exist yet. */
  readonly applied: readonly AppliedMigration[] | null;
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
}

// SQLSTATE lock_not_available: a lock_timeout expired (or a NOWAIT lock was refused).
const LOCK_NOT_AVAILABLE = "55P03";

/**
 * Executes a plan on the locked connection through umzug: each segment in its own transaction (or none,
 * for a `transaction: false` step), history rows written in the same transaction as the migrations.
 */
export async function runPlan(options: RunOptions): Promise<void> {
  const { connection, where, checked, plan, log } = options;
  const direction = plan.direction as MigrationDirection;
  const durations = new Map<string, number>();
  // Set by the step that threw, so the error names the migration rather than umzug's wrapper.
  let failed: { step?: { entry: CheckedMigration; error: unknown } } = {};

  const invoke = (entry: CheckedMigration) =>
    inSpan(
      migratorTracer(),
      MIGRATION_SPAN,
      { attributes: { version: entry.version.text, name: entry.name, direction } },
      () => invokeUntraced(entry),
    );
  const invokeUntraced = async (entry: CheckedMigration) => {
    const version = entry.version.text;
    const name = entry.name;
    log({ level: "info", event: "migrating", version, name, direction });
    const started = performance.now();
    try {
      const step = direction === "up" ? entry.migration.up : entry.migration.down;
      // Outside a transaction, a concurrent index build cleans up after itself (see concurrent-index.ts).
      const sql = entry.transactional
        ? connection
        : withIndexBuilds(connection, {
            retry: options.retry,
            timeoutMs: options.indexBuildTimeoutMs,
            version,
            log,
          });
      await step?.({ sql, schema: where.schema, version, name });
    } catch (error) {
      failed.step = { entry, error };
      throw error;
    }
    const durationMs = performance.now() - started;
    durations.set(version, durationMs);
    log({ level: "info", event: "migrated", version, name, direction, durationMs });
  };

  const entries = new Map(checked.map((e) => [e.version.text, e]));
  const storage = new BufferedHistoryStorage(options.applied, entries, durations);
  const umzug = new Umzug<RunContext>({
    migrations: checked.map(
      (entry): RunnableMigration<RunContext> => ({
        name: entry.version.text,
        up: () => invoke(entry),
        down: () => invoke(entry),
      }),
    ),
    storage,
    context: { sql: connection },
    logger: undefined,
  });

  let historyExists = options.applied !== null;
  const committed: string[] = [];
  const { ddlLockTimeoutMs } = options;
  // Unset: the session's own statement_timeout stays (set_config to its current value is a no-op).
  const statementTimeout =
    options.statementTimeoutMs === undefined ? null : String(options.statementTimeoutMs);

  let lostConnection = false;
  /**
   * Undoes what a failed segment left on the run's connection, and lists the INVALID indexes a failed
   * non-transactional step left. A query failing here with a lost connection is the run's own connection
   * gone (unlike the step's error, which may come from any connection the migration used).
   */
  const recover = async (transactional: boolean): Promise<string[]> => {
    try {
      if (transactional) {
        await connection`rollback`;
        return [];
      }
      await connection`reset search_path`;
      return await invalidIndexes(connection, where.schema);
    } catch (error) {
      if (isConnectionLost(error)) {
        lostConnection = true;
        options.onConnectionLost();
      }
      return [];
    }
  };

  for (const segment of segments(plan.steps)) {
    const versions = segment.map((e) => e.version.text);
    const transactional = segment[0]?.transactional === true;
    // A transaction that hit its lock timeout left nothing behind: forget its history rows and run it
    // again from its start, still on this connection and so under the run's advisory lock.
    const restore = storage.checkpoint();
    const historyExisted = historyExists;
    for (let attempt = 1; ; attempt++) {
      failed = {};
      // Lock timeouts name no relation: watch the wait to name it (half the timeout: any full wait is seen).
      const watch =
        transactional && ddlLockTimeoutMs > 0
          ? watchLockWaits(options.pool, options.pid, Math.ceil(ddlLockTimeoutMs / 2))
          : null;
      try {
        if (transactional) {
          await connection`begin`;
          // One statement: the schema and the timeouts, all undone by the commit or rollback.
          await connection`select set_config('search_path', quote_ident(${where.schema}), true),
            set_config('lock_timeout', ${String(ddlLockTimeoutMs)}, true),
            set_config('statement_timeout', coalesce(${statementTimeout}, current_setting('statement_timeout')), true)`;
        }
        if (!historyExists) await createHistory(connection, where);
        historyExists = true;
        if (!transactional) await connection`set search_path to ${connection(where.schema)}`;
        if (direction === "up") await umzug.up({ migrations: versions });
        else await umzug.down({ migrations: versions });
        await storage.flush(connection, where);
        if (transactional) await connection`commit`;
        else await connection`reset search_path`;
        watch?.stop();
        break;
      } catch (error) {
        const waited: LockWait | null = watch?.stop() ?? null;
        // A failure outside a step (history write, commit) is charged to the segment's last migration.
        const entry = failed.step?.entry ?? (segment[segment.length - 1] as CheckedMigration);
        const cause = failed.step ? failed.step.error : error;
        const leftInvalid = await recover(transactional);
        const lockTimeout = (cause as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;
        if (lockTimeout && transactional && attempt < options.retry.attempts && !lostConnection) {
          restore();
          historyExists = historyExisted;
          const delayMs = retryDelayMs(options.retry, attempt);
          log({
            level: "warn",
            event: "retry",
            version: entry.version.text,
            versions,
            attempt,
            attempts: options.retry.attempts,
            delayMs,
            relation: waited?.relation ?? null,
            blockers: waited?.blockers ?? [],
          });
          await sleep(delayMs);
          continue;
        }
        log({
          level: "error",
          event: "failed",
          version: entry.version.text,
          direction,
          message: cause instanceof Error ? cause.message : String(cause),
        });
        const failure = {
          version: entry.version.text,
          name: entry.name,
          direction,
          committed,
          invalidIndexes: leftInvalid,
          cause,
        };
        if (lockTimeout) {
          const timeoutMs = transactional && ddlLockTimeoutMs > 0 ? ddlLockTimeoutMs : null;
          throw new DdlLockTimeoutError({
            ...failure,
            timeoutMs,
            relation: waited?.relation ?? null,
            attempts: attempt,
          });
        }
        throw new MigrationFailedError(failure);
      }
    }
    committed.push(...versions);
    log({ level: "info", event: "committed", versions });
  }
}
