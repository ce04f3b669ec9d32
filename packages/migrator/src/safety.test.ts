import { describe, expect, it } from "vitest";
import { backends, historyVersions, tableMigration, tablesIn, useFreshSchema } from "../test/support.js";
import { checksum } from "./checksum.js";
import {
  ChecksumMismatchError,
  IndexBuildError,
  IrreversibleMigrationError,
  MigrationFailedError,
  OutOfOrderError,
  UnknownAppliedVersionError,
} from "./errors.js";
import { createMigrator } from "./migrator.js";
import type { Migration } from "./types.js";

const users = tableMigration("1.0.0", "users");
const sessions = tableMigration("1.1.0", "sessions");
const messages = tableMigration("1.2.0", "messages");

async function schemaExists(
  sql: ReturnType<ReturnType<typeof backends>[number]["current"]>["sql"],
  schema: string,
) {
  const [row] = await sql`select count(*)::int as n from pg_catalog.pg_namespace where nspname = ${schema}`;
  return row?.n === 1;
}

describe.each(backends())("safety guarantees on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  describe("all or nothing", () => {
    const failing: Migration = {
      version: "1.2.0",
      name: "half_done",
      up: async ({ sql }) => {
        await sql`create table half_done (id int)`;
        await sql`insert into t_users values (1)`;
        await sql`select * from no_such_table`;
      },
    };

    it("rolls back every migration of the run and its history rows when one fails", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, migrations: [users], schema }).migrate();
      const migrator = createMigrator({ sql, migrations: [users, sessions, failing], schema });

      const error = await migrator.migrate().catch((e: unknown) => e);

      expect(error).toBeInstanceOf(MigrationFailedError);
      expect(error).toMatchObject({
        code: "MIGRATION_FAILED",
        version: "1.2.0",
        direction: "up",
        committed: [],
      });
      expect((error as MigrationFailedError).cause).toMatchObject({ code: "42P01" });
      expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_users"]);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      const [row] = await sql`select count(*)::int as n from ${sql(schema)}.t_users`;
      expect(row?.n).toBe(0);
      expect((await migrator.status()).current).toBe("1.0.0");
    });

    it("leaves no schema behind when the first run of a fresh database fails", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const migrator = createMigrator({ sql, migrations: [users, sessions, failing], schema });
      await expect(migrator.migrate()).rejects.toBeInstanceOf(MigrationFailedError);
      expect(await schemaExists(sql, schema)).toBe(false);
    });

    it("rolls back a failing down run as a whole", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const badDown = { ...sessions, down: async () => Promise.reject(new Error("cannot drop sessions")) };
      const migrator = createMigrator({ sql, migrations: [users, badDown, messages], schema });
      await migrator.migrate();

      await expect(migrator.migrate({ to: "1.0.0" })).rejects.toMatchObject({
        code: "MIGRATION_FAILED",
        version: "1.1.0",
        direction: "down",
        message: expect.stringContaining("cannot drop sessions"),
      });
      expect(await tablesIn(sql, schema)).toEqual([
        "schema_migrations",
        "t_messages",
        "t_sessions",
        "t_users",
      ]);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
    });
  });

  describe("transaction: false", () => {
    const index: Migration = {
      version: "1.1.0",
      name: "users_index",
      transaction: false,
      // CREATE INDEX CONCURRENTLY fails inside a transaction block, so success proves it ran outside one.
      up: ({ sql }) => sql`create index concurrently if not exists users_id on t_users (id)`,
      down: ({ sql }) => sql`drop index concurrently if exists users_id`,
    };

    it("runs alone outside a transaction, in the schema, and commits what came before", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const migrator = createMigrator({ sql, migrations: [users, index, messages], schema });

      expect((await migrator.migrate()).applied).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
      const indexes = await sql`select indexname from pg_catalog.pg_indexes where schemaname = ${schema}`;
      expect(indexes.map((r) => r.indexname)).toContain("users_id");
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
      // The session's search_path is restored after the run.
      const [path] = await sql`show search_path`;
      expect(path?.search_path).not.toContain(schema);

      expect((await migrator.migrate({ to: "1.0.0" })).applied).toEqual(["1.2.0", "1.1.0"]);
      const after = await sql`select indexname from pg_catalog.pg_indexes where schemaname = ${schema}`;
      expect(after.map((r) => r.indexname)).not.toContain("users_id");
    });

    it("keeps the migrations committed before it when a later one fails", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const failing: Migration = { ...messages, up: ({ sql }) => sql`select * from no_such_table` };
      const migrator = createMigrator({ sql, migrations: [users, index, failing], schema });

      await expect(migrator.migrate()).rejects.toMatchObject({
        code: "MIGRATION_FAILED",
        version: "1.2.0",
        committed: ["1.0.0", "1.1.0"],
      });
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0"]);
    });

    it("drops the INVALID index a failed CREATE INDEX CONCURRENTLY leaves and names it in the error", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const unique: Migration = {
        ...index,
        up: ({ sql }) => sql`create unique index concurrently "Users_Unique" on t_users (id)`,
      };
      await createMigrator({ sql, migrations: [users], schema }).migrate();
      await sql`insert into ${sql(schema)}.t_users values (1), (1)`;
      const migrator = createMigrator({
        sql,
        migrations: [users, unique],
        schema,
        retry: { attempts: 2, baseMs: 10 },
      });

      const error = await migrator.migrate().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationFailedError);
      expect(error).toMatchObject({ version: "1.1.0", invalidIndexes: [] });
      expect((error as Error).cause).toBeInstanceOf(IndexBuildError);
      expect((error as Error).cause).toMatchObject({ attempts: 2, left: [], cause: { code: "23505" } });
      expect((error as Error).message).toContain(
        `failed after 2 attempts (could not create unique index "Users_Unique"); the INVALID index it left (${schema}."Users_Unique") was dropped`,
      );
      expect((await migrator.status()).invalidIndexes).toEqual([]);

      // Fix the data, run again.
      await sql`delete from ${sql(schema)}.t_users`;
      await expect(migrator.migrate()).resolves.toMatchObject({ applied: ["1.1.0"] });
      expect((await migrator.status()).invalidIndexes).toEqual([]);
    });

    it("lists in status the INVALID indexes left by builds outside the migrator", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const migrator = createMigrator({ sql, migrations: [users], schema });
      await migrator.migrate();
      await sql`insert into ${sql(schema)}.t_users values (1), (1)`;
      await expect(
        sql.unsafe(`create unique index concurrently "By Hand" on ${schema}.t_users (id)`),
      ).rejects.toMatchObject({ code: "23505" });
      expect((await migrator.status()).invalidIndexes).toEqual([`${schema}."By Hand"`]);
    });
  });

  describe("drift, order and reversibility are checked before anything runs", () => {
    it("refuses an applied migration whose source or explicit checksum changed", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const withSource = { ...sessions, source: "create table t_sessions (id int)" };
      const labelled = { ...messages, checksum: "messages-v1" };
      await createMigrator({ sql, migrations: [users, withSource, labelled], schema }).migrate();
      const next = tableMigration("1.3.0", "next");

      for (const [edited, list] of [
        ["1.1.0", [users, { ...withSource, source: "create table t_sessions (id bigint)" }, labelled, next]],
        ["1.2.0", [users, withSource, { ...labelled, checksum: "messages-v2" }, next]],
      ] as const) {
        const error = await createMigrator({ sql, migrations: list, schema })
          .migrate()
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ChecksumMismatchError);
        expect(error).toMatchObject({ code: "CHECKSUM_MISMATCH", version: edited });
      }
      expect(await tablesIn(sql, schema)).not.toContain("t_next");
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
    });

    it("does not check a code migration without source or checksum, however it is recompiled", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, migrations: [users, sessions], schema }).migrate();
      // What a minifier makes of `sessions`: other names, same effect.
      const minified: Migration = {
        ...sessions,
        up: ({ sql: s }) => s`create table ${s("t_sessions")} (id int)`,
      };

      await expect(
        createMigrator({ sql, migrations: [users, minified, messages], schema }).migrate(),
      ).resolves.toMatchObject({ applied: ["1.2.0"] });
    });

    it("upgrades a history written by the code-fingerprinting versions without reporting drift", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const withSource = { ...sessions, source: "create table t_sessions (id int)" };
      // The history table and rows as the earlier versions left them: `checksum text not null`, code
      // migrations recorded with a hash of their compiled text, source migrations with a hash of the source.
      await sql`create schema ${sql(schema)}`;
      await sql`create table ${sql(schema)}.schema_migrations (
        version text primary key, name text not null, checksum text not null,
        applied_at timestamptz not null default now(), execution_ms integer not null)`;
      await sql`create table ${sql(schema)}.t_users (id int)`;
      await sql`create table ${sql(schema)}.t_sessions (id int)`;
      await sql`insert into ${sql(schema)}.schema_migrations (version, name, checksum, execution_ms) values
        ('1.0.0', 'users', ${checksum("async({sql})=>sql`create table t_users (id int)`")}, 1),
        ('1.1.0', 'sessions', ${checksum("create table t_sessions (id int)")}, 1)`;

      // A source migration still reports a changed source.
      const editedSource = { ...withSource, source: "create table t_sessions (id bigint)" };
      await expect(
        createMigrator({ sql, migrations: [users, editedSource, messages], schema }).migrate(),
      ).rejects.toBeInstanceOf(ChecksumMismatchError);

      // The fingerprinted code migration is not drift; the next code migration is recorded without a checksum.
      const migrator = createMigrator({ sql, migrations: [users, withSource, messages], schema });
      await expect(migrator.migrate()).resolves.toMatchObject({ applied: ["1.2.0"] });
      const status = await migrator.status();
      expect(status.applied.map((row) => [row.version, row.checksum])).toEqual([
        ["1.0.0", checksum("async({sql})=>sql`create table t_users (id int)`")],
        ["1.1.0", checksum("create table t_sessions (id int)")],
        ["1.2.0", null],
      ]);
      await expect(migrator.migrate({ to: "1.0.0" })).resolves.toMatchObject({ applied: ["1.2.0", "1.1.0"] });
    });

    it("refuses a database that has a version the code does not know", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, migrations: [users, sessions], schema }).migrate();

      const error = await createMigrator({ sql, migrations: [users, messages], schema })
        .migrate()
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UnknownAppliedVersionError);
      expect(error).toMatchObject({ code: "UNKNOWN_APPLIED_VERSION", version: "1.1.0" });
      expect(await tablesIn(sql, schema)).not.toContain("t_messages");
    });

    it("refuses a pending migration older than the current version", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, migrations: [users, messages], schema }).migrate();
      const late = tableMigration("1.3.0", "late");

      const error = await createMigrator({ sql, migrations: [users, sessions, messages, late], schema })
        .migrate()
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(OutOfOrderError);
      expect(error).toMatchObject({ code: "OUT_OF_ORDER", version: "1.1.0", current: "1.2.0" });
      expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_messages", "t_users"]);
    });

    it("refuses to go below a migration without down, before running any down", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const { down: _, ...oneWay } = sessions;
      const migrator = createMigrator({ sql, migrations: [users, oneWay, messages], schema });
      await migrator.migrate();

      const error = await migrator.migrate({ to: "1.0.0" }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(IrreversibleMigrationError);
      expect(error).toMatchObject({ code: "IRREVERSIBLE", version: "1.1.0" });
      // 1.2.0's down would have run first had the check not come before the run.
      expect(await tablesIn(sql, schema)).toContain("t_messages");
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
      // Down to a version above the irreversible one still works.
      expect((await migrator.migrate({ to: "1.1.0" })).applied).toEqual(["1.2.0"]);
    });
  });

  describe("dry run", () => {
    it("reports the plan and changes nothing", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const migrator = createMigrator({ sql, migrations: [users, sessions, messages], schema });

      expect(await migrator.migrate({ dryRun: true, to: "1.1.0" })).toEqual({
        from: null,
        to: "1.1.0",
        direction: "up",
        applied: ["1.0.0", "1.1.0"],
        // The transactions it would run, none attempted.
        segments: [{ versions: ["1.0.0", "1.1.0"], transactional: true, attempts: [] }],
      });
      expect(await schemaExists(sql, schema)).toBe(false);

      await migrator.migrate();
      expect(await migrator.migrate({ dryRun: true, to: "1.0.0" })).toEqual({
        from: "1.2.0",
        to: "1.0.0",
        direction: "down",
        applied: ["1.2.0", "1.1.0"],
        segments: [{ versions: ["1.2.0", "1.1.0"], transactional: true, attempts: [] }],
      });
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
      expect(await tablesIn(sql, schema)).toContain("t_messages");
    });

    it("reports drift like a real run", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, migrations: [users, sessions], schema }).migrate();
      const dryRun = createMigrator({ sql, migrations: [users], schema }).migrate({ dryRun: true });
      await expect(dryRun).rejects.toBeInstanceOf(UnknownAppliedVersionError);
    });
  });
});
