import { describe, expect, it } from "vitest";
import { DdlLockTimeoutError } from "../src/errors.js";
import { createMigrator } from "../src/migrator.js";
import type { Migration } from "../src/types.js";
import {
  backends,
  historyVersions,
  TEST_DATABASE_URL,
  tableMigration,
  tablesIn,
  useBackend,
  useFreshSchema,
} from "./support.js";

const users = tableMigration("1.0.0", "users");
const sessions = tableMigration("1.1.0", "sessions");
const addEmail: Migration = {
  version: "1.2.0",
  name: "users_email",
  up: ({ sql }) => sql`alter table t_users add column email text`,
  down: ({ sql }) => sql`alter table t_users drop column email`,
};

async function columnsOf(sql: ReturnType<ReturnType<typeof useBackend>>["sql"], schema: string) {
  const rows = await sql<{ column_name: string }[]>`
    select column_name from information_schema.columns
    where table_schema = ${schema} and table_name = 't_users' order by column_name`;
  return rows.map((r) => r.column_name);
}

describe.skipIf(!TEST_DATABASE_URL)("a migration blocked by another session's lock (real PostgreSQL)", () => {
  const current = useBackend("postgres");
  const freshSchema = useFreshSchema(current);

  /** Holds `lock table <table> in <mode>` in another transaction until the returned function is called. */
  async function holdLock(table: string, mode: string): Promise<() => Promise<void>> {
    const { sql } = current();
    const holder = await sql.reserve();
    await holder`begin`;
    await holder.unsafe(`lock table ${table} in ${mode} mode`);
    return async () => {
      await holder`rollback`;
      holder.release();
    };
  }

  it("fails with DDL_LOCK_TIMEOUT in about ddlLockTimeoutMs and leaves schema and history unchanged", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [users] }).migrate();
    // Even a reader's lock blocks ALTER TABLE, and everything queued behind the ALTER with it.
    const release = await holdLock(`${schema}.t_users`, "access share");
    try {
      const migrator = createMigrator({
        sql,
        schema,
        migrations: [users, sessions, addEmail],
        ddlLockTimeoutMs: 400,
        // One attempt: what a run without retries reports (retries: test/retry.test.ts).
        retry: false,
      });
      const started = performance.now();
      const error = await migrator.migrate().catch((e: unknown) => e);
      const elapsed = performance.now() - started;

      expect(error).toBeInstanceOf(DdlLockTimeoutError);
      expect(error).toMatchObject({
        code: "DDL_LOCK_TIMEOUT",
        version: "1.2.0",
        migrationName: "users_email",
        direction: "up",
        committed: [],
        timeoutMs: 400,
        invalidIndexes: [],
        attempts: 1,
      });
      expect((error as Error).message).toMatch(/1\.2\.0 \(users_email\) could not lock .* within 400 ms/);
      expect((error as Error).cause).toMatchObject({ code: "55P03" });
      expect(elapsed).toBeGreaterThanOrEqual(400);
      // The holder never lets go: without the timeout the run would wait until the test times out. The
      // margin is for a loaded machine (the run's own round trips come on top of the wait).
      expect(elapsed).toBeLessThan(5_000);
      // 1.1.0 ran in the same transaction and was rolled back with it.
      expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_users"]);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      expect(await columnsOf(sql, schema)).toEqual(["id"]);
    } finally {
      await release();
    }
    // Retrying once the other session is done completes the run (the advisory lock was released too).
    const retry = createMigrator({ sql, schema, migrations: [users, sessions, addEmail], lockTimeoutMs: 0 });
    await expect(retry.migrate()).resolves.toMatchObject({ applied: ["1.1.0", "1.2.0"] });
    expect(await columnsOf(sql, schema)).toEqual(["email", "id"]);
  });

  it("waits as long as needed with ddlLockTimeoutMs: 0", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [users] }).migrate();
    const release = await holdLock(`${schema}.t_users`, "access share");
    const run = createMigrator({ sql, schema, migrations: [users, addEmail], ddlLockTimeoutMs: 0 }).migrate();
    // 0 is no limit (not an immediate failure): still waiting after 600 ms, done once the lock goes.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await release();
    await expect(run).resolves.toMatchObject({ applied: ["1.2.0"] });
  });

  // PostgreSQL only: PGlite, single-threaded, does not enforce statement_timeout.
  it("fails a statement that runs longer than statementTimeoutMs", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const slow: Migration = { version: "1.0.0", name: "slow", up: ({ sql }) => sql`select pg_sleep(5)` };
    const started = performance.now();
    const error = await createMigrator({ sql, schema, migrations: [slow], statementTimeoutMs: 200 })
      .migrate()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "MIGRATION_FAILED", version: "1.0.0" });
    expect((error as Error).cause).toMatchObject({ code: "57014" });
    expect(performance.now() - started).toBeLessThan(4_000);
  });
});

describe.each(backends())("timeouts of a run on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  it("sets lock_timeout and statement_timeout for transactions, and leaves non-transactional steps alone", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const seen: Record<string, string> = {};
    const record =
      (label: string): Migration["up"] =>
      async ({ sql }) => {
        const [row] = await sql<{ lock: string; statement: string }[]>`
          select current_setting('lock_timeout') as lock, current_setting('statement_timeout') as statement`;
        seen[label] = `${row?.lock} ${row?.statement}`;
      };
    const [session] = await sql<{ lock: string; statement: string }[]>`
      select current_setting('lock_timeout') as lock, current_setting('statement_timeout') as statement`;
    const migrations: Migration[] = [
      { version: "1.0.0", name: "in_transaction", up: record("transaction") },
      { version: "1.1.0", name: "alone", transaction: false, up: record("alone") },
    ];
    await createMigrator({
      sql,
      schema,
      migrations,
      ddlLockTimeoutMs: 1_500,
      statementTimeoutMs: 60_000,
    }).migrate();
    expect(seen).toEqual({ transaction: "1500ms 1min", alone: `${session?.lock} ${session?.statement}` });

    // Defaults: a 5 s lock timeout, and the session's own statement timeout.
    await createMigrator({ sql, schema, table: "defaults", migrations: migrations.slice(0, 1) }).migrate();
    expect(seen.transaction).toBe(`5s ${session?.statement}`);
  });
});
