import type { LoggerOption } from "@agent-platform/common";
import type postgres from "postgres";
import type { RetryOptions } from "./retry.js";

/**
 * The connection a migration runs on: the run's reserved connection, inside the run's transaction
 * (or outside any transaction for `transaction: false`). It has no `begin`, `reserve` or `end`.
 */
export type MigrationSql = postgres.ISql;

/** What a migration's `up` and `down` are given: the run's connection and where they run. */
export interface MigrationContext {
  /** Run every statement through this; the pool passed to the migrator is busy with the run. */
  readonly sql: MigrationSql;
  /** The schema the migrations run in; it is the whole `search_path` during the run. */
  readonly schema: string;
  readonly version: string;
  readonly name: string;
}

/** One versioned schema change: `up`, and `down` to revert it (without one it is irreversible). */
export interface Migration {
  /** A semantic version (`2.3.0`, `v2.3.0`, `2.3.0-rc.1`); stored without the `v`. */
  readonly version: string;
  readonly name: string;
  readonly up: (ctx: MigrationContext) => unknown;
  readonly down?: (ctx: MigrationContext) => unknown;
  /**
   * `false` runs this migration alone, outside a transaction (e.g. `CREATE INDEX CONCURRENTLY`), after
   * committing the migrations before it. Default `true`.
   */
  readonly transaction?: boolean;
  /**
   * The text the drift checksum is taken from (its sha256); `sqlMigrations` sets the up file's text.
   * Not together with `checksum`. Without either, the migration has no checksum and is not checked for drift.
   */
  readonly source?: string;
  /**
   * The drift checksum itself, recorded as given (1-128 printable ASCII characters): change it when the
   * migration's effect changes. Not together with `source`.
   */
  readonly checksum?: string;
}

/** A row of the history table. */
export interface AppliedMigration {
  readonly version: string;
  readonly name: string;
  /** `null`: applied without a checksum (a code migration with neither `source` nor `checksum`). */
  readonly checksum: string | null;
  readonly appliedAt: Date;
  readonly executionMs: number;
}

/** Whether a run applies migrations (`up`) or reverts them (`down`). */
export type MigrationDirection = "up" | "down";

/**
 * What the migrator logs: each event is one record of `MigratorOptions.logger`, written with the method
 * of its `level`, these fields but `level`, and the message `migration <event>`.
 */
export type MigratorEvent =
  | { level: "info"; event: "lock_waiting"; schema: string; table: string }
  | { level: "info"; event: "lock_acquired"; schema: string; table: string; waitedMs: number }
  | {
      level: "info";
      event: "plan";
      from: string | null;
      to: string | null;
      direction: MigrationDirection | "none";
      versions: string[];
      dryRun: boolean;
    }
  | { level: "info"; event: "migrating"; version: string; name: string; direction: MigrationDirection }
  | {
      level: "info";
      event: "migrated";
      version: string;
      name: string;
      direction: MigrationDirection;
      durationMs: number;
    }
  | { level: "info"; event: "committed"; versions: string[] }
  | {
      /** A transaction hit its lock timeout; it was rolled back and runs again after `delayMs`. */
      level: "warn";
      event: "retry";
      /** The migration that waited (the transaction re-runs from its first migration). */
      version: string;
      versions: string[];
      attempt: number;
      attempts: number;
      delayMs: number;
      /** The relation it waited for and the pids holding it, when seen (see `DdlLockTimeoutError.relation`). */
      relation: string | null;
      blockers: number[];
    }
  | {
      /** A concurrent index build failed; the INVALID indexes it left were dropped and it runs again. */
      level: "warn";
      event: "index_build_retry";
      version: string;
      statement: string;
      attempt: number;
      attempts: number;
      delayMs: number;
      dropped: string[];
      message: string;
    }
  | { level: "error"; event: "failed"; version: string; direction: MigrationDirection; message: string }
  | {
      /** The run's signal was aborted: its statement was cancelled and its transaction rolled back. */
      level: "warn";
      event: "aborted";
      version: string;
      direction: MigrationDirection;
    }
  | { level: "warn"; event: "unlock_failed"; message: string };

// Any postgres.js instance, whatever custom types it was created with.
// biome-ignore lint/suspicious/noExplicitAny: the type parameter is irrelevant to the migrator
export type AnySql = postgres.Sql<any>;

/** What `createMigrator` takes: the connection, the migrations, where the history lives and the run's timeouts. */
export interface MigratorOptions {
  /** A postgres.js instance; the run reserves one of its connections. */
  readonly sql: AnySql;
  readonly migrations: readonly Migration[];
  /** Default `"public"`. Created if missing on the first run that applies something. */
  readonly schema?: string;
  /** History table in `schema`. Default `"schema_migrations"`. */
  readonly table?: string;
  /** How long `migrate()` waits for a connection and the migrator's own advisory lock. Default 30 000. */
  readonly lockTimeoutMs?: number;
  /**
   * `lock_timeout` of each transaction of the run: how long a migration's statement may wait for a lock
   * on a table before its transaction is rolled back and retried (see `retry`), and after the last attempt
   * the run fails with `DdlLockTimeoutError`. `0` waits forever. Default 5 000.
   * `transaction: false` migrations run under the session's own setting instead.
   */
  readonly ddlLockTimeoutMs?: number;
  /**
   * `statement_timeout` of each transaction of the run. Default: unset, the session's own setting applies.
   * `transaction: false` migrations run under the session's own setting instead.
   */
  readonly statementTimeoutMs?: number;
  /**
   * Retries of what another session's lock made fail. A transaction that hits `ddlLockTimeoutMs` is rolled
   * back and run again from its start, still under the run's advisory lock, after an exponential wait with
   * jitter; a concurrent index build that fails has the INVALID index it left dropped and runs again.
   * Nothing else is retried. `false`: one attempt. Default `{ attempts: 4, baseMs: 500, maxMs: 10_000 }`.
   */
  readonly retry?: RetryOptions | false;
  /**
   * `statement_timeout` of each concurrent index build (`CREATE INDEX CONCURRENTLY`, `REINDEX …
   * CONCURRENTLY`) of a `transaction: false` migration; its `lock_timeout` is 0 meanwhile (the build's
   * waits for older transactions are lock waits). `0`: no limit. Default 0.
   */
  readonly indexBuildTimeoutMs?: number;
  /** Where the run's events go (`MigratorEvent`): pino, `console`, any logger with the four levels. Default: silent. */
  readonly logger?: LoggerOption;
}

/** Where a schema stands: `Migrator.status()`. */
export interface MigrationStatus {
  /** The highest applied version, or `null` when nothing is applied. */
  readonly current: string | null;
  readonly latest: string;
  readonly applied: AppliedMigration[];
  /** Migrations in the list that are not applied, in version order. */
  readonly pending: Migration[];
  /**
   * `schema.index` of every index in the schema that is not valid: left by a failed `CREATE INDEX
   * CONCURRENTLY` (or still being built by one).
   */
  readonly invalidIndexes: string[];
  /**
   * The session holding the migration lock of this history table now, i.e. a run in progress (this
   * process's or another's), or `null`. `since`: when that session's current transaction started or, between
   * two (a retry's wait), when its last statement ended; the run has held the lock at least since then.
   */
  readonly lock: { readonly pid: number; readonly since: Date | null } | null;
}

/** Where `Migrator.migrate()` goes: a target version or a number of steps, or only the plan. */
export interface MigrateOptions {
  /**
   * Target version (optional leading `v`), or `"base"`: below the first migration, every applied
   * migration reverted. Default: the latest. Not together with `steps`.
   */
  readonly to?: string;
  /**
   * How many migrations to run from the current version: positive applies the next pending ones, negative
   * reverts the newest applied ones; more than there are stops at the latest or at base. Not with `to`.
   */
  readonly steps?: number;
  /** Compute and return the plan, change nothing. */
  readonly dryRun?: boolean;
  /**
   * Stops the run when aborted (wire it to SIGTERM/SIGINT): a wait for the lock or between retries ends at
   * once; a running statement is cancelled (`pg_cancel_backend` from a connection of its own), its
   * transaction rolled back and the migration lock released; then `migrate()` rejects with
   * `MigrationAbortedError`. What was committed before stays.
   */
  readonly signal?: AbortSignal;
}

/** One try of a segment (see `SegmentReport`). */
export interface SegmentAttempt {
  /**
   * `committed`; `lock_timeout`: rolled back after waiting `ddlLockTimeoutMs` for a lock (retried while
   * attempts remain); `failed`: rolled back for another reason; `aborted`: stopped by the run's signal.
   */
  readonly outcome: "committed" | "lock_timeout" | "failed" | "aborted";
  readonly durationMs: number;
  /** The relation the attempt was seen waiting for, when it timed out on a lock. */
  readonly relation: string | null;
}

/**
 * One unit of a run: consecutive transactional migrations in one transaction (history rows included), or
 * one `transaction: false` migration. A segment that failed on a lock is rolled back and run again whole.
 */
export interface SegmentReport {
  readonly versions: string[];
  readonly transactional: boolean;
  /** Every try, in order; empty for a dry run. */
  readonly attempts: SegmentAttempt[];
}

/** What a `migrate()` did (or, for a dry run, would do). */
export interface MigrateResult {
  /** `null`: nothing was applied (base). */
  readonly from: string | null;
  /** `null`: base (everything reverted, or nothing to apply on an empty history). */
  readonly to: string | null;
  readonly direction: MigrationDirection | "none";
  /** Versions run (or, for a dry run, to be run), in execution order. */
  readonly applied: string[];
  /** How the run was cut into transactions, and each one's attempts. */
  readonly segments: SegmentReport[];
}

/** A schema's migrator, from `createMigrator`: its status, and runs up or down under one lock. */
export interface Migrator {
  status(): Promise<MigrationStatus>;
  migrate(options?: MigrateOptions): Promise<MigrateResult>;
}
