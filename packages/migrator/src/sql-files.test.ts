import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "@agent-platform/common";
import { afterEach, describe, expect, it } from "vitest";
import { backends, historyVersions, tablesIn, useFreshSchema } from "../test/support.js";
import { ChecksumMismatchError } from "./errors.js";
import { createMigrator } from "./migrator.js";
import { sqlMigrations } from "./sql-files.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "migrator-sql-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const files = {
  "1.0.0_users.up.sql": "create table users (id int);\ncreate table roles (id int);\n",
  "1.0.0_users.down.sql": "drop table roles;\ndrop table users;\n",
  "1.1.0_users_index.up.sql":
    "-- platform-migrate: no-transaction\ncreate index concurrently if not exists users_id on users (id);\n",
  "1.1.0_users_index.down.sql": "drop index concurrently if exists users_id;\n",
  "v1.10.0_seed_roles.up.sql": "insert into roles values (1), (2);\n",
  "v1.10.0_seed_roles.down.sql": "delete from roles;\n",
  "README.md": "not a migration",
};

describe("sqlMigrations", () => {
  it("loads up/down pairs with versions, names, sources and the no-transaction marker", () => {
    const loaded = sqlMigrations(migrationsDir(files));
    expect(loaded.map((m) => [m.version, m.name, m.transaction, typeof m.down])).toEqual([
      ["1.0.0", "users", true, "function"],
      ["1.1.0", "users_index", false, "function"],
      ["v1.10.0", "seed_roles", true, "function"],
    ]);
    expect(loaded[0]?.source).toBe(files["1.0.0_users.up.sql"]);
  });

  it("allows a missing down file", () => {
    const [only] = sqlMigrations(migrationsDir({ "2.0.0_one_way.up.sql": "select 1;" }));
    expect(only?.down).toBeUndefined();
  });

  it.each([
    [{ "1.0.0-users.up.sql": "select 1;" }, /expected <version>_<name>\.up\.sql/],
    [{ "1.0.0_users.sql": "select 1;" }, /expected <version>_<name>\.up\.sql/],
    [{ "1.0.0_users.down.sql": "select 1;" }, /has no matching up file/],
  ])("rejects %j", (contents, message) => {
    const dir = migrationsDir(contents);
    expect(() => sqlMigrations(dir)).toThrow(ConfigError);
    expect(() => sqlMigrations(dir)).toThrow(message);
  });

  it("rejects a directory that does not exist", () => {
    expect(() => sqlMigrations(join(tmpdir(), "no-such-migrations-dir"))).toThrow(
      /Cannot read the migrations directory/,
    );
  });
});

describe.each(backends())("SQL file migrations on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  it("run multi-statement files up and down, the marked one outside a transaction", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, migrations: sqlMigrations(migrationsDir(files)), schema });

    expect((await migrator.migrate()).applied).toEqual(["1.0.0", "1.1.0", "1.10.0"]);
    expect(await tablesIn(sql, schema)).toEqual(["roles", "schema_migrations", "users"]);
    const [roles] = await sql`select count(*)::int as n from ${sql(schema)}.roles`;
    expect(roles?.n).toBe(2);
    const indexes = await sql`select indexname from pg_catalog.pg_indexes where schemaname = ${schema}`;
    expect(indexes.map((r) => r.indexname)).toContain("users_id");

    expect((await migrator.migrate({ to: "1.0.0" })).applied).toEqual(["1.10.0", "1.1.0"]);
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
  });

  it("detect an up file edited after it was applied", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const dir = migrationsDir(files);
    await createMigrator({ sql, migrations: sqlMigrations(dir), schema }).migrate({ to: "1.0.0" });
    writeFileSync(
      join(dir, "1.0.0_users.up.sql"),
      "create table users (id bigint);\ncreate table roles (id int);\n",
    );

    const edited = createMigrator({ sql, migrations: sqlMigrations(dir), schema });
    await expect(edited.migrate()).rejects.toBeInstanceOf(ChecksumMismatchError);
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
  });
});
