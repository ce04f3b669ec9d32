import { configError, inSpan, loggerOption } from "@agent-platform/common/internal";
import { cancelOnAbort } from "./cancel.js";
import { isConnectionLost } from "./connection-lost.js";
import { MigrationAbortedError } from "./errors.js";
import { type HistoryTable, readHistory } from "./history.js";
import { validateIdentifier } from "./identifier.js";
import { invalidIndexes } from "./indexes.js";
import { acquireLock, lockHolder, releaseLock, reserveConnection } from "./lock.js";
import { type CheckedMigration, checkMigrations } from "./migration-list.js";
import { planMigration, resolveTarget } from "./plan.js";
import { retryOption } from "./retry.js";
import { runPlan } from "./runner.js";
import { segmentsOf } from "./segment.js";
import { MIGRATE_SPAN, migratorTracer } from "./tracing.js";
import type {
  MigrateOptions,
  MigrateResult,
  MigrationStatus,
  Migrator,
  MigratorEvent,
  MigratorOptions,
} from "./types.js";
import { compareVersions, parseVersion } from "./version.js";

const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
/** The lock_timeout of each transactional migration unless `ddlLockTimeoutMs` says otherwise. */
export const DEFAULT_DDL_LOCK_TIMEOUT_MS = 5_000;
// The largest timeout both PostgreSQL (an int of milliseconds) and Node's setTimeout (which fires at
// once above it) take: about 24.8 days.
const MAX_TIMEOUT_MS = 2_147_483_647;

/** A timeout option: a whole number of milliseconds from 0 to MAX_TIMEOUT_MS. */
export function timeoutOption(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > MAX_TIMEOUT_MS) {
    throw configError(
      "migrator",
      `\`${name}\` must be a whole number of milliseconds from 0 to ${MAX_TIMEOUT_MS}; got ${String(value)}`,
      name,
    );
  }
  return value;
}

/**
 * A migrator for one schema. Construction validates everything that does not need the database
 * (identifiers, versions, duplicates); `migrate()` plans and runs under the advisory lock.
 */
export function createMigrator(options: MigratorOptions): Migrator {
  if (typeof options !== "object" || options === null || typeof options.sql?.reserve !== "function") {
    throw configError(
      "migrator",
      "`sql` must be a postgres.js instance (the pool itself, not a transaction or a reserved connection)",
      "sql",
    );
  }
  const { sql } = options;
  const where: HistoryTable = {
    schema: validateIdentifier(options.schema ?? "public", "schema"),
    table: validateIdentifier(options.table ?? "schema_migrations", "table"),
  };
  const lockTimeoutMs = timeoutOption("lockTimeoutMs", options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS);
  const ddlLockTimeoutMs = timeoutOption(
    "ddlLockTimeoutMs",
    options.ddlLockTimeoutMs ?? DEFAULT_DDL_LOCK_TIMEOUT_MS,
  );
  const statementTimeoutMs =
    options.statementTimeoutMs === undefined
      ? undefined
      : timeoutOption("statementTimeoutMs", options.statementTimeoutMs);
  const retry = retryOption(options.retry);
  const indexBuildTimeoutMs = timeoutOption("indexBuildTimeoutMs", options.indexBuildTimeoutMs ?? 0);
  const logger = loggerOption(options.logger, "migrator");
  const checked = checkMigrations(options.migrations);
  const latest = checked[checked.length - 1] as CheckedMigration;

  const log = ({ level, ...fields }: MigratorEvent) => {
    try {
      logger[level](fields, `migration ${fields.event}`);
    } catch {
      // A broken logger must not break a migration run.
    }
  };

  async function status(): Promise<MigrationStatus> {
    const [history, invalid, lock] = await Promise.all([
      readHistory(sql, where),
      invalidIndexes(sql, where.schema),
      lockHolder(sql, where),
    ]);
    const applied = history ?? [];
    applied.sort((a, b) => compareVersionText(a.version, b.version));
    const appliedVersions = new Set(applied.map((row) => row.version));
    const last = applied[applied.length - 1];
    return {
      current: last?.version ?? null,
      latest: latest.version.text,
      applied,
      pending: checked.filter((e) => !appliedVersions.has(e.version.text)).map((e) => e.migration),
      invalidIndexes: invalid,
      lock,
    };
  }

  /** In a `migrator migrate` span (schema, direction, applied versions) when an SDK is registered. */
  function migrate(migrateOptions: MigrateOptions = {}): Promise<MigrateResult> {
    return inSpan(
      migratorTracer(),
      MIGRATE_SPAN,
      { attributes: { "db.schema": where.schema, dry_run: migrateOptions.dryRun === true } },
      async (span) => {
        const result = await migrateUntraced(migrateOptions);
        span?.setAttribute("direction", result.direction);
        span?.setAttribute("applied", result.applied);
        return result;
      },
    );
  }

  async function migrateUntraced(migrateOptions: MigrateOptions): Promise<MigrateResult> {
    const target = resolveTarget(checked, migrateOptions.to, migrateOptions.steps);
    if (migrateOptions.dryRun) {
      // No lock: a dry run changes nothing, and under MVCC it reads a consistent (pre-run) history.
      const plan = planMigration(checked, (await readHistory(sql, where)) ?? [], target);
      return report(plan, true);
    }
    const { signal } = migrateOptions;
    const stopped = () => new MigrationAbortedError();
    if (signal?.aborted) throw stopped();
    const deadline = Date.now() + lockTimeoutMs;
    const connection = await reserveConnection(sql, deadline, lockTimeoutMs, signal).catch((error) => {
      throw signal?.aborted ? stopped() : error;
    });
    try {
      const { waitedMs, pid } = await acquireLock(
        connection,
        where,
        deadline,
        lockTimeoutMs,
        () => log({ level: "info", event: "lock_waiting", ...where }),
        signal,
      ).catch((error) => {
        throw signal?.aborted ? stopped() : error;
      });
      log({ level: "info", event: "lock_acquired", ...where, waitedMs });
      let connectionLost = false;
      try {
        // Read under the lock: whatever a previous holder applied is seen here. Another session's lock on
        // the history table makes this wait (no lock_timeout outside the run's transactions): a stop
        // cancels the wait like a migration's statement.
        const reading = cancelOnAbort(sql, pid, signal);
        const applied = await readHistory(connection, where).finally(() => reading.stop());
        if (signal?.aborted) throw stopped();
        const plan = planMigration(checked, applied ?? [], target);
        const result = report(plan, false);
        if (plan.direction !== "none") {
          const segments = await runPlan({
            connection,
            where,
            historyExists: applied !== null,
            plan,
            signal,
            log,
            ddlLockTimeoutMs,
            statementTimeoutMs,
            retry,
            indexBuildTimeoutMs,
            pool: sql,
            pid,
            onConnectionLost: () => {
              connectionLost = true;
            },
          });
          return { ...result, segments };
        }
        return result;
      } catch (error) {
        // A query of the run's own (reading the history) failed because its connection is gone; a lost
        // connection inside the run is reported by runPlan, which can tell its own from the migration's.
        if (isConnectionLost(error)) connectionLost = true;
        throw signal?.aborted && !(error instanceof MigrationAbortedError) ? stopped() : error;
      } finally {
        if (!connectionLost) {
          await releaseLock(connection, where).catch((error: unknown) =>
            log({ level: "warn", event: "unlock_failed", message: String(error) }),
          );
        }
      }
    } finally {
      connection.release();
    }
  }

  function report(plan: ReturnType<typeof planMigration>, dryRun: boolean): MigrateResult {
    const versions = plan.steps.map((e) => e.version.text);
    log({
      level: "info",
      event: "plan",
      from: plan.from,
      to: plan.to,
      direction: plan.direction,
      versions,
      dryRun,
    });
    return {
      from: plan.from,
      to: plan.to,
      direction: plan.direction,
      applied: versions,
      segments: segmentsOf(plan.steps).map((segment) => ({
        versions: [...segment.versions],
        transactional: segment.transactional,
        attempts: [],
      })),
    };
  }

  return { status, migrate };
}

/** Orders history versions; a malformed stored version sorts first rather than breaking `status()`. */
function compareVersionText(a: string, b: string): number {
  const parse = (text: string) => {
    try {
      return parseVersion(text);
    } catch {
      return null;
    }
  };
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return (x ? 1 : 0) - (y ? 1 : 0);
  return compareVersions(x, y);
}
