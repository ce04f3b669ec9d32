// The platform's shared configuration error and logger shape, so a user of this package needs no other import.
export {
  ConfigError,
  isConfigError,
  type Logger,
  type LoggerOption,
  type LogMethod,
} from "@agent-platform/common";
export {
  ChecksumMismatchError,
  DdlLockTimeoutError,
  DuplicateVersionError,
  IndexBuildError,
  InvalidVersionError,
  IrreversibleMigrationError,
  LockTimeoutError,
  MigrationAbortedError,
  MigrationFailedError,
  MigrationStepError,
  MigratorError,
  type MigratorErrorCode,
  OutOfOrderError,
  UnknownAppliedVersionError,
  UnknownVersionError,
} from "./errors.js";
export { createMigrator } from "./migrator.js";
export { DEFAULT_RETRY, MAX_RETRY_ATTEMPTS, MAX_RETRY_WAIT_MS, type RetryOptions } from "./retry.js";
export { sqlMigrations } from "./sql-files.js";
export type {
  AppliedMigration,
  MigrateOptions,
  MigrateResult,
  Migration,
  MigrationContext,
  MigrationDirection,
  MigrationSql,
  MigrationStatus,
  Migrator,
  MigratorEvent,
  MigratorOptions,
  SegmentAttempt,
  SegmentReport,
} from "./types.js";
export { compareVersions, isVersion, parseVersion, type Version } from "./version.js";
