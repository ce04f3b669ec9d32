import { configError } from "@agent-platform/common/internal";
import { checksumOf } from "./checksum.js";
import { DuplicateVersionError } from "./errors.js";
import type { Migration } from "./types.js";
import { compareVersions, parseVersion, type Version } from "./version.js";

// An author's checksum is a label (`"v2"`, a hash, a date) shown in errors and `status`: printable, bounded.
const EXPLICIT_CHECKSUM = /^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/;

/** A migration from the list, validated, with its parsed version and checksum. */
export interface CheckedMigration {
  readonly version: Version;
  readonly name: string;
  /** `null`: no checksum (see `checksumOf`), so no drift check. */
  readonly checksum: string | null;
  readonly transactional: boolean;
  readonly migration: Migration;
}

/** The validated migration list in version order. */
export function checkMigrations(migrations: readonly Migration[]): CheckedMigration[] {
  if (!Array.isArray(migrations) || migrations.length === 0) {
    throw configError("migrator", "`migrations` must be a non-empty array of migrations", "migrations");
  }
  const entries = migrations.map(toEntry);
  entries.sort((a, b) => compareVersions(a.version, b.version));
  for (let i = 1; i < entries.length; i++) {
    const entry = entries[i] as CheckedMigration;
    if (compareVersions((entries[i - 1] as CheckedMigration).version, entry.version) === 0) {
      throw new DuplicateVersionError(entry.version.text);
    }
  }
  return entries;
}

function toEntry(migration: Migration, index: number): CheckedMigration {
  const where = `migrations[${index}]`;
  if (typeof migration !== "object" || migration === null) {
    throw configError("migrator", `${where} must be an object`, "migrations");
  }
  const version = parseVersion(migration.version);
  if (typeof migration.name !== "string" || migration.name.trim() === "") {
    throw configError("migrator", `${where} (${version.text}) needs a non-empty name`, "migrations");
  }
  if (typeof migration.up !== "function") {
    throw configError("migrator", `${where} (${version.text}) needs an up function`, "migrations");
  }
  if (migration.down !== undefined && typeof migration.down !== "function") {
    throw configError(
      "migrator",
      `${where} (${version.text}) has a down that is not a function`,
      "migrations",
    );
  }
  if (migration.transaction !== undefined && typeof migration.transaction !== "boolean") {
    throw configError(
      "migrator",
      `${where} (${version.text}) has a non-boolean transaction flag`,
      "migrations",
    );
  }
  if (migration.source !== undefined && typeof migration.source !== "string") {
    throw configError("migrator", `${where} (${version.text}) has a non-string source`, "migrations");
  }
  if (migration.checksum !== undefined) {
    if (typeof migration.checksum !== "string" || !EXPLICIT_CHECKSUM.test(migration.checksum)) {
      throw configError(
        "migrator",
        `${where} (${version.text}) has a checksum that is not 1-128 printable ASCII characters`,
        "migrations",
      );
    }
    if (migration.source !== undefined) {
      throw configError(
        "migrator",
        `${where} (${version.text}) sets both source and checksum; the checksum comes from one of them`,
        "migrations",
      );
    }
  }
  return {
    version,
    name: migration.name,
    checksum: checksumOf(migration),
    transactional: migration.transaction !== false,
    migration,
  };
}
