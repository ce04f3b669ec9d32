import { createHash } from "node:crypto";
import type { Migration } from "./types.js";

/** sha256 of a migration's source text; line endings are normalised so a CRLF checkout does not read as drift. */
export function checksum(source: string): string {
  return createHash("sha256").update(source.replace(/\r\n/g, "\n")).digest("hex");
}

/**
 * The checksum recorded for a migration in the history: the one its author set, the hash of its `source`
 * (an SQL file's text), or `null` when it has neither. A code migration's compiled text is never hashed:
 * a bundler or minifier rewrites it without changing what it does, which would read as drift.
 */
export function checksumOf(migration: Migration): string | null {
  if (migration.checksum !== undefined) return migration.checksum;
  return migration.source === undefined ? null : checksum(migration.source);
}
