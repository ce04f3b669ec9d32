import type { Logger } from "@agent-platform/common";
import { createMigrator } from "@agent-platform/migrator";
import type { Sql } from "postgres";
import { INBOX_HISTORY_TABLE, INBOX_SCHEMA, inboxMigrations } from "./migrations.js";

/**
 * Brings the inbox tables to their latest version. They have their own history table in their own schema,
 * so the platform schema version that operators move with POST /databases/{id}/migrate never touches them.
 * Safe with several server processes starting at once: the migrator serialises them on its lock.
 */
export async function migrateInbox(sql: Sql, logger: Logger): Promise<void> {
  const migrator = createMigrator({
    sql,
    migrations: inboxMigrations,
    schema: INBOX_SCHEMA,
    table: INBOX_HISTORY_TABLE,
    lockTimeoutMs: 30_000,
    logger: logger.child({ migrations: "inbox" }),
  });
  const result = await migrator.migrate();
  if (result.applied.length > 0) logger.info({ applied: result.applied }, "inbox schema migrated");
}
