import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMigrator, type Migration } from "@agent-platform/migrator";
import { afterAll, expect, inject, it } from "vitest";
import { startEmbeddedPostgres } from "./embedded.js";

const root = mkdtempSync(join(tmpdir(), "embedded-stop-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it("a migration run stopped by its signal rolls back on the in-process client and releases the lock", async () => {
  const dataDir = join(root, "data");
  cpSync(inject("pgliteTemplate"), dataDir, { recursive: true });
  const db = await startEmbeddedPostgres({ dataDir });
  try {
    const stop = new AbortController();
    const migrations: Migration[] = [
      {
        version: "1.0.0",
        name: "stopped",
        up: async ({ sql }) => {
          await sql`create table first_half (id int)`;
          stop.abort(new Error("SIGTERM"));
          await sql`create table second_half (id int)`;
        },
      },
    ];
    const error = await createMigrator({ sql: db.sql, migrations })
      .migrate({ signal: stop.signal })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "MIGRATION_ABORTED", version: "1.0.0", committed: [] });
    const tables = await db.sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public'`;
    expect(tables).toEqual([]);
    // The run let go of the lock: the next one applies the migration.
    expect(
      (
        await createMigrator({
          sql: db.sql,
          migrations: [{ ...migrations[0], up: () => {} } as Migration],
        }).migrate()
      ).applied,
    ).toEqual(["1.0.0"]);
  } finally {
    await db.stop();
  }
});
