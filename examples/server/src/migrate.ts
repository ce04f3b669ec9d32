import { capEcho } from "@agent-platform/common/hono";
import { type MigrateResult, type MigrationStatus, parseVersion } from "@agent-platform/migrator";
import type { RegisteredDatabase } from "./databases.js";
import { ApiError } from "./http/errors.js";

export interface MigrationResultBody {
  message: string;
  db_id: string;
  from_version: string | null;
  to_version: string;
  direction: MigrateResult["direction"];
  applied: string[];
}

export interface MigrationStatusBody {
  db_id: string;
  current: string | null;
  latest: string;
  applied: { version: string; name: string; applied_at: string; execution_ms: number }[];
  pending: { version: string; name: string }[];
  /** A run holding the migration lock now (here or in another process), and since when; `null` when none. */
  lock: { pid: number; since: string | null } | null;
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function unknownVersionDetail(target: string, knownVersions: readonly string[]): string {
  return `Unknown target version '${capEcho(target)}'. Known versions: ${knownVersions.join(", ")}`;
}

/** The stored form of a version (no leading `v`), by the migrator's own grammar; undefined when it is none. */
export function canonicalVersion(version: string): string | undefined {
  try {
    return parseVersion(version).text;
  } catch {
    return undefined;
  }
}

/** Why a requested target is not a version (the 422 detail), or undefined when it is one. */
export function versionProblem(target: string): string | undefined {
  return canonicalVersion(target) === undefined
    ? `must be a version such as 2.5.6 (MAJOR.MINOR.PATCH, optional -PRERELEASE), got '${capEcho(target)}'`
    : undefined;
}

/**
 * How long a client should wait before retrying a migration blocked by another session's table lock: the
 * migrator's default lock wait, so a retry comes after at least one more timeout's worth of progress.
 */
export const DDL_LOCK_RETRY_AFTER_SECONDS = 5;

/**
 * The HTTP answer to a migrator error, by its stable `code`. DDL_LOCK_TIMEOUT is 503 with `Retry-After`:
 * the request was fine and nothing was applied, the database was busy (another session held a table the
 * migration alters), so the same request is expected to succeed later; 409 would tell the client to change
 * something first. Everything else (MIGRATION_FAILED, LOCK_TIMEOUT, a lost connection) is a failed
 * migration: the migrator's transaction leaves the database where it was.
 */
export function migrationErrorToApi(
  error: unknown,
  target: string | undefined,
  knownVersions: readonly string[],
) {
  switch (codeOf(error)) {
    case "INVALID_VERSION":
      return new ApiError(422, `target_version: ${versionProblem(target ?? "") ?? messageOf(error)}`);
    case "UNKNOWN_VERSION":
      return new ApiError(400, unknownVersionDetail(target ?? "", knownVersions));
    case "IRREVERSIBLE":
    case "CHECKSUM_MISMATCH":
    case "UNKNOWN_APPLIED_VERSION":
    case "OUT_OF_ORDER":
      return new ApiError(400, messageOf(error));
    case "DDL_LOCK_TIMEOUT":
      return new ApiError(503, messageOf(error), DDL_LOCK_RETRY_AFTER_SECONDS);
    case "MIGRATION_ABORTED":
      // The server is shutting down: nothing of the stopped transaction stays, the request can be repeated.
      return new ApiError(503, messageOf(error), DDL_LOCK_RETRY_AFTER_SECONDS);
    default:
      return new ApiError(500, `Failed to migrate database: ${messageOf(error)}`);
  }
}

/**
 * Refuses a target that is not a version (422) or a well-formed but unknown one (400) before any database
 * is touched. `knownVersions` are canonical (see `canonicalVersion`).
 */
export function checkTarget(target: string | undefined, knownVersions: readonly string[]): void {
  if (target === undefined) return;
  const canonical = canonicalVersion(target);
  if (canonical === undefined) throw new ApiError(422, `target_version: ${versionProblem(target)}`);
  if (!knownVersions.includes(canonical)) {
    throw new ApiError(400, unknownVersionDetail(target, knownVersions));
  }
}

export async function migrateDatabase(
  database: RegisteredDatabase,
  target: string | undefined,
  knownVersions: readonly string[],
): Promise<MigrationResultBody> {
  let result: MigrateResult;
  try {
    result = await database.migrator.migrate(target === undefined ? {} : { to: target });
  } catch (error) {
    throw migrationErrorToApi(error, target, knownVersions);
  }
  return {
    message: `Database migrated successfully to version ${result.to}`,
    db_id: database.id,
    from_version: result.from,
    // Only a "base" target ends below every version (null), and target_version takes versions only.
    to_version: result.to as string,
    direction: result.direction,
    applied: result.applied,
  };
}

export async function migrationStatus(database: RegisteredDatabase): Promise<MigrationStatusBody> {
  let status: MigrationStatus;
  try {
    status = await database.migrator.status();
  } catch (error) {
    throw new ApiError(500, `Failed to read the migration status: ${messageOf(error)}`);
  }
  return {
    db_id: database.id,
    current: status.current,
    latest: status.latest,
    applied: status.applied.map((row) => ({
      version: row.version,
      name: row.name,
      applied_at: row.appliedAt.toISOString(),
      execution_ms: row.executionMs,
    })),
    pending: status.pending.map((migration) => ({ version: migration.version, name: migration.name })),
    lock: status.lock && { pid: status.lock.pid, since: status.lock.since?.toISOString() ?? null },
  };
}

/**
 * The startup line for a database whose schema is behind the code (`database default is at 2.3.0; 2.5.0,
 * 2.5.6 pending: POST /databases/default/migrate`), or `undefined` when nothing is pending.
 */
export function pendingLine(databaseId: string, status: MigrationStatus): string | undefined {
  if (status.pending.length === 0) return undefined;
  const versions = status.pending.map(
    (migration) => canonicalVersion(migration.version) ?? migration.version,
  );
  const at = status.current === null ? "has no migration applied" : `is at ${status.current}`;
  return `database ${databaseId} ${at}; ${versions.join(", ")} pending: POST /databases/${databaseId}/migrate`;
}
