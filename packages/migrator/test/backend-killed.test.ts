import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { createMigrator } from "../src/migrator.js";
import type { Migration } from "../src/types.js";
import {
  historyVersions,
  TEST_DATABASE_URL,
  tableMigration,
  tablesIn,
  useBackend,
  useFreshSchema,
} from "./support.js";

// postgres.js 3.4.9 throws an uncatchable TypeError when a query is written on a reserved connection whose
// backend has died (porsager/postgres#1208); the workspace patches it (patches/postgres@3.4.9.patch). The
// migrator runs on a reserved connection, so this is the failure it must survive: a rejected migrate(),
// the schema as it was, and a process that keeps running.
describe.skipIf(!TEST_DATABASE_URL)(
  "a migration whose backend is terminated mid-run (real PostgreSQL)",
  () => {
    const current = useBackend("postgres");
    const freshSchema = useFreshSchema(current);

    it("rejects, leaves the schema at the pre-run version, and the next run completes", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const users = tableMigration("1.0.0", "users");
      await createMigrator({ sql, schema, migrations: [users] }).migrate();

      const killed: Migration = {
        version: "1.1.0",
        name: "killed",
        up: async ({ sql: run }) => {
          await run`create table t_killed (id int)`;
          const [row] = await run<{ pid: number }[]>`select pg_backend_pid() as pid`;
          await sql`select pg_terminate_backend(${row?.pid ?? 0})`;
          await run`insert into t_killed values (1)`;
        },
        down: ({ sql: run }) => run`drop table t_killed`,
      };
      const migrations = [users, killed];
      await expect(createMigrator({ sql, schema, migrations }).migrate()).rejects.toMatchObject({
        code: "MIGRATION_FAILED",
      });
      // Every pooled connection still works: releasing the dead reserved connection used to put it back in the
      // pool's open queue, failing the next query it got with the insert's CONNECTION_CLOSED (#1199).
      await expectPoolUsable(sql);
      expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_users"]);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);

      const retried = createMigrator({
        sql,
        schema,
        migrations: [users, { ...killed, up: ({ sql: run }) => run`create table t_killed (id int)` }],
      });
      // A changed `up` would be drift only once applied; 1.1.0 never was, so the retry just runs it.
      await expect(retried.migrate()).resolves.toMatchObject({ to: "1.1.0", applied: ["1.1.0"] });
    });

    it("keeps the pool usable when the close reaches the client before the next query is written", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const users = tableMigration("1.0.0", "users");
      await createMigrator({ sql, schema, migrations: [users] }).migrate();
      const killed: Migration = {
        version: "1.1.0",
        name: "killed",
        up: async ({ sql: run }) => {
          const [row] = await run<{ pid: number }[]>`select pg_backend_pid() as pid`;
          await sql`select pg_terminate_backend(${row?.pid ?? 0})`;
          // Let the socket close arrive first: the insert is then written on a connection postgres.js already closed.
          await new Promise((resolve) => setTimeout(resolve, 200));
          await run`create table t_killed (id int)`;
        },
      };
      await expect(
        createMigrator({ sql, schema, migrations: [users, killed] }).migrate(),
      ).rejects.toMatchObject({
        code: "MIGRATION_FAILED",
      });
      await expectPoolUsable(sql);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
    });

    it("still rolls back and unlocks when a different connection dies inside up", async () => {
      const { sql, url } = current();
      const schema = freshSchema();
      const users = tableMigration("1.0.0", "users");
      await createMigrator({ sql, schema, migrations: [users] }).migrate();
      // The migration's own work on a second pooled connection, whose backend is terminated: its
      // CONNECTION_CLOSED says nothing about the run's connection, which must still roll back and unlock.
      const sideConnectionDies: Migration = {
        version: "1.1.0",
        name: "side_connection_dies",
        up: async ({ sql: run }) => {
          await run`create table t_side (id int)`;
          const side = await sql.reserve();
          try {
            const [row] = await side<{ pid: number }[]>`select pg_backend_pid() as pid`;
            await run`select pg_terminate_backend(${row?.pid ?? 0})`;
            await side`select 1`;
          } finally {
            side.release();
          }
        },
      };
      const error = await createMigrator({ sql, schema, migrations: [users, sideConnectionDies] })
        .migrate()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "MIGRATION_FAILED", version: "1.1.0" });
      // The side connection's loss, as postgres.js reports it (reset while reading, or closed).
      expect(["ECONNRESET", "CONNECTION_CLOSED"]).toContain(
        ((error as Error).cause as { code: string }).code,
      );

      // Another session can take the run's advisory lock at once: it was released, not left with a
      // connection that went back to the pool still inside the failed transaction.
      const other = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const key = `${schema}.schema_migrations`;
        const [row] = await other<{ locked: boolean }[]>`
          select pg_try_advisory_lock(hashtext('@agent-platform/migrator'), hashtext(${key})) as locked`;
        expect(row?.locked).toBe(true);
      } finally {
        await other.end({ timeout: 5 });
      }
      expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_users"]);
      await expectPoolUsable(sql);
    });
  },
);

/** One query per pooled connection, in turn (the open queue is round-robin): none may fail. */
async function expectPoolUsable(sql: postgres.Sql): Promise<void> {
  for (let i = 0; i < sql.options.max + 1; i++) {
    await expect(sql`select 1 as ok`).resolves.toEqual([{ ok: 1 }]);
  }
}
