import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "@agent-platform/embedded-postgres";
import { createMigrator } from "@agent-platform/migrator";
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { BACKENDS, createTestDatabase } from "../../test/databases.js";
import { platformMigrations } from "./index.js";

async function openBackend(backend: string): Promise<{ sql: Sql; close(): Promise<void> }> {
  if (backend === "postgres") {
    const database = await createTestDatabase();
    const { default: postgres } = await import("postgres");
    const sql = postgres(database.url, { max: 2, onnotice: () => {} });
    return {
      sql,
      async close() {
        await sql.end();
        await database.drop();
      },
    };
  }
  const root = await mkdtemp(join(tmpdir(), "migrations-test-"));
  await cp(inject("pgliteTemplateDir"), join(root, "data"), { recursive: true });
  const embedded = await startEmbeddedPostgres({ dataDir: join(root, "data") });
  return {
    sql: embedded.sql,
    async close() {
      await embedded.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

describe.each(BACKENDS)("platform migrations on %s", (backend) => {
  let db: { sql: Sql; close(): Promise<void> };
  beforeAll(async () => {
    db = await openBackend(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  const tables = async () =>
    (
      await db.sql<{ name: string }[]>`
        SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_name <> 'schema_migrations' ORDER BY 1`
    ).map((row) => row.name);
  const columns = async (table: string) =>
    (
      await db.sql<{ name: string }[]>`
        SELECT column_name AS name FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = ${table}`
    ).map((row) => row.name);

  it("are the four versions, each with a down", () => {
    const migrations = platformMigrations();
    expect(migrations.map((m) => m.version)).toEqual(["2.0.0", "2.3.0", "2.5.0", "2.5.6"]);
    expect(migrations.every((m) => m.down !== undefined && m.transaction !== false)).toBe(true);
  });

  it("each step changes the schema up and its down undoes it", async () => {
    const migrator = createMigrator({ sql: db.sql, migrations: platformMigrations() });
    await migrator.migrate({ to: "2.0.0" });
    expect(await tables()).toEqual(["evals", "knowledge", "memories", "metrics", "sessions"]);
    expect(await columns("sessions")).not.toContain("summary");

    await migrator.migrate({ to: "2.3.0" });
    expect(await columns("sessions")).toContain("summary");
    expect(await columns("memories")).toContain("created_at");

    await migrator.migrate({ to: "2.5.0" });
    expect(await tables()).toContain("approvals");

    await migrator.migrate({ to: "2.5.6" });
    expect(await columns("knowledge")).toContain("content_hash");
    await db.sql`INSERT INTO knowledge (id, name) VALUES ('k1', 'handbook.pdf')`;
    await expect(db.sql`INSERT INTO knowledge (id, name) VALUES ('k2', 'handbook.pdf')`).rejects.toThrow(
      /knowledge_linked_to_name_key/,
    );
    await db.sql`DELETE FROM knowledge`;

    await migrator.migrate({ to: "2.5.0" });
    expect(await columns("knowledge")).not.toContain("content_hash");
    await migrator.migrate({ to: "2.3.0" });
    expect(await tables()).not.toContain("approvals");
    await migrator.migrate({ to: "2.0.0" });
    expect(await columns("sessions")).not.toContain("summary");
    expect(await columns("memories")).not.toContain("created_at");
    expect((await migrator.status()).current).toBe("2.0.0");
  });
});
