import { fileURLToPath } from "node:url";
import { type Migration, sqlMigrations } from "@agent-platform/migrator";

/**
 * The platform store's schema (sessions, memories, metrics, evals, knowledge, approvals) as SQL file pairs
 * beside this module. SQL files rather than code migrations: the drift checksum is taken from the file
 * text, which is the same under tsx, vitest and a bundler, whereas a code migration is checked only by a
 * `checksum` label its author must remember to change.
 */
export function platformMigrations(): Migration[] {
  return sqlMigrations(fileURLToPath(new URL(".", import.meta.url)));
}
