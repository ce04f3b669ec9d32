/**
 * Every error the migrator throws on purpose carries one of these stable codes. Options it cannot work
 * with are the platform's shared `ConfigError` (code `CONFIG_INVALID`), not a `MigratorError`.
 */
export type MigratorErrorCode =
  | "DUPLICATE_VERSION"
  | "INVALID_VERSION"
  | "UNKNOWN_VERSION"
  | "MIGRATION_FAILED"
  | "LOCK_TIMEOUT"
  | "DDL_LOCK_TIMEOUT"
  | "CHECKSUM_MISMATCH"
  | "UNKNOWN_APPLIED_VERSION"
  | "OUT_OF_ORDER"
  | "IRREVERSIBLE"
  | "INDEX_BUILD_FAILED"
  | "MIGRATION_ABORTED";

/** The base of every error a run throws: `code` is stable, the message is for people. */
export abstract class MigratorError extends Error {
  abstract readonly code: MigratorErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Two migrations in the list have the same version (after dropping a leading `v`). */
export class DuplicateVersionError extends MigratorError {
  readonly code = "DUPLICATE_VERSION";
  constructor(readonly version: string) {
    super(`Migration version ${version} appears more than once in the migration list`);
  }
}

/** A version string is not a semantic version (`MAJOR.MINOR.PATCH[-PRERELEASE]`, optional leading `v`). */
export class InvalidVersionError extends MigratorError {
  readonly code = "INVALID_VERSION";
  constructor(readonly version: string) {
    super(
      `${JSON.stringify(version)} is not a valid version: expected MAJOR.MINOR.PATCH with an optional -PRERELEASE and an optional leading "v"`,
    );
  }
}

/** The requested target version is well formed but no migration has it. */
export class UnknownVersionError extends MigratorError {
  readonly code = "UNKNOWN_VERSION";
  constructor(readonly version: string) {
    super(`No migration has version ${version}`);
  }
}

/** What a failed step of a run reports (see `MigrationFailedError` and `DdlLockTimeoutError`). */
export interface StepFailure {
  readonly version: string;
  readonly name: string;
  readonly direction: "up" | "down";
  /** Versions of this run committed before the failing step (only after a `transaction: false` step). */
  readonly committed: readonly string[];
  /** `schema.index` names left INVALID in the schema; only a failed `transaction: false` step can leave them. */
  readonly invalidIndexes: readonly string[];
  readonly cause: unknown;
}

function invalidIndexNote(invalidIndexes: readonly string[]): string {
  return invalidIndexes.length === 0
    ? ""
    : `; INVALID indexes left in the schema: ${invalidIndexes.join(", ")} (drop them with DROP INDEX CONCURRENTLY, then re-run)`;
}

/** A migration of a run failed: which one, in which direction, and what the run had committed before it. */
export abstract class MigrationStepError extends MigratorError {
  readonly version: string;
  readonly migrationName: string;
  readonly direction: "up" | "down";
  readonly committed: readonly string[];
  readonly invalidIndexes: readonly string[];

  constructor(details: StepFailure, message: string) {
    super(
      `Migration ${details.version} (${details.name}) ${message}${invalidIndexNote(details.invalidIndexes)}`,
      {
        cause: details.cause,
      },
    );
    this.version = details.version;
    this.migrationName = details.name;
    this.direction = details.direction;
    this.committed = details.committed;
    this.invalidIndexes = details.invalidIndexes;
  }
}

/**
 * A migration threw (or its transaction failed to commit). Everything in the failing transaction was
 * rolled back; `committed` lists versions of this run that were already committed before it
 * (only possible when a `transaction: false` migration split the run).
 */
export class MigrationFailedError extends MigrationStepError {
  readonly code = "MIGRATION_FAILED";

  constructor(details: StepFailure) {
    const reason = details.cause instanceof Error ? details.cause.message : String(details.cause);
    super(details, `failed while running ${details.direction}: ${reason}`);
  }
}

/**
 * A migration waited longer than its lock timeout for a lock another session holds (SQLSTATE 55P03).
 * Nothing of the failing transaction was applied, so the run can be retried once that session is done;
 * `committed` is as for `MigrationFailedError`.
 */
export class DdlLockTimeoutError extends MigrationStepError {
  readonly code = "DDL_LOCK_TIMEOUT";
  /** `ddlLockTimeoutMs` of the run; `null` when the step ran outside a transaction under the session's own setting. */
  readonly timeoutMs: number | null;
  /**
   * The relation the migration waited for, as seen while it waited (or as PostgreSQL names it in the
   * error); `null` when neither told (a wait shorter than a sample, a row lock).
   */
  readonly relation: string | null;
  /** How many times the run tried this step (see `MigratorOptions.retry`). */
  readonly attempts: number;

  constructor(
    details: StepFailure & { timeoutMs: number | null; relation?: string | null; attempts?: number },
  ) {
    const relation = details.relation ?? relationOf(details.cause);
    const attempts = details.attempts ?? 1;
    const waited = details.timeoutMs === null ? "its lock timeout" : `${details.timeoutMs} ms`;
    const tries = attempts === 1 ? "" : ` (each of ${attempts} attempts)`;
    super(
      details,
      `could not lock ${relation ?? "a relation it changes"} within ${waited}${tries} while running ${details.direction}: another session holds a conflicting lock; retry when that session is done`,
    );
    this.timeoutMs = details.timeoutMs;
    this.relation = relation;
    this.attempts = attempts;
  }
}

/**
 * The run was stopped through `MigrateOptions.signal` (a SIGTERM, a Ctrl-C): the statement running was
 * cancelled, its transaction rolled back and the migration lock released before this was thrown.
 * `committed` lists what the run had committed before; the rest is still pending: run it again.
 */
export class MigrationAbortedError extends MigratorError {
  readonly code = "MIGRATION_ABORTED";
  /** The migration that was running or about to run; `null` when the run was stopped before any. */
  readonly version: string | null;
  readonly committed: readonly string[];
  readonly invalidIndexes: readonly string[];

  constructor(details: Partial<StepFailure> = {}) {
    const during =
      details.version === undefined
        ? "before any migration ran: nothing was changed"
        : `at migration ${details.version} (${details.name}): its statement was cancelled and its transaction rolled back`;
    super(
      `The migration run was stopped ${during}; run it again to continue${invalidIndexNote(details.invalidIndexes ?? [])}`,
      {
        cause: details.cause,
      },
    );
    this.version = details.version ?? null;
    this.committed = details.committed ?? [];
    this.invalidIndexes = details.invalidIndexes ?? [];
  }
}

/**
 * A concurrent index build of a `transaction: false` migration failed on its last attempt; the migration
 * fails with it as its `cause`. Says what became of the INVALID index the build left: dropped, left to
 * another session building it, not droppable (and why), or never identified (an unnamed index).
 */
export class IndexBuildError extends MigratorError {
  readonly code = "INDEX_BUILD_FAILED";
  /** The statement, e.g. `CREATE INDEX CONCURRENTLY users_email_idx`. */
  readonly statement: string;
  readonly attempts: number;
  /** INVALID indexes the build left that are still there (`schema.index`). */
  readonly left: readonly string[];

  constructor(details: {
    statement: string;
    attempts: number;
    cause: unknown;
    cleanup: string;
    left: readonly string[];
  }) {
    const reason = details.cause instanceof Error ? details.cause.message : String(details.cause);
    const tries = details.attempts === 1 ? "" : ` after ${details.attempts} attempts`;
    super(`${details.statement} failed${tries} (${reason}); ${details.cleanup}`, { cause: details.cause });
    this.statement = details.statement;
    this.attempts = details.attempts;
    this.left = details.left;
  }
}

/** `schema.table` from a PostgreSQL error's fields, when the server filled them in. */
function relationOf(cause: unknown): string | null {
  if (typeof cause !== "object" || cause === null) return null;
  const { schema_name: schema, table_name: table } = cause as { schema_name?: unknown; table_name?: unknown };
  if (typeof table !== "string") return null;
  return typeof schema === "string" ? `${schema}.${table}` : table;
}

/** Another run held the migration lock (or the connection pool stayed busy) for longer than `lockTimeoutMs`. */
export class LockTimeoutError extends MigratorError {
  readonly code = "LOCK_TIMEOUT";
  constructor(readonly timeoutMs: number) {
    super(
      `Timed out after ${timeoutMs} ms waiting for the migration lock: another migration run holds it (or no pool connection was free)`,
    );
  }
}

/** An applied migration's source changed since it was applied. */
export class ChecksumMismatchError extends MigratorError {
  readonly code = "CHECKSUM_MISMATCH";
  constructor(
    readonly version: string,
    readonly appliedChecksum: string,
    readonly currentChecksum: string,
  ) {
    super(
      `Migration ${version} was changed after it was applied (applied checksum ${appliedChecksum}, current ${currentChecksum}); restore it and add a new migration instead`,
    );
  }
}

/** The history table records a version that is not in the migration list. */
export class UnknownAppliedVersionError extends MigratorError {
  readonly code = "UNKNOWN_APPLIED_VERSION";
  constructor(readonly version: string) {
    super(
      `The database has migration ${version} applied, but it is not in the migration list (is this code older than the database?)`,
    );
  }
}

/** A pending migration is older than the current version, so it would run out of order. */
export class OutOfOrderError extends MigratorError {
  readonly code = "OUT_OF_ORDER";
  constructor(
    readonly version: string,
    readonly current: string,
  ) {
    super(
      `Migration ${version} is pending but older than the current version ${current}; give it a version above ${current}`,
    );
  }
}

/** Migrating down would need the `down` of a migration that has none. */
export class IrreversibleMigrationError extends MigratorError {
  readonly code = "IRREVERSIBLE";
  constructor(readonly version: string) {
    super(`Migration ${version} has no down migration, so the database cannot be migrated below it`);
  }
}
