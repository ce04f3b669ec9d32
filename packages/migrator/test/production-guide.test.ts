import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createMigrator } from "../src/migrator.js";
import { sqlMigrations } from "../src/sql-files.js";
import { backends, historyVersions, useFreshSchema } from "./support.js";

// The README's "Running migrations in production" examples, run as written: one source for the docs and
// the test. A block whose first line is `-- migrations/<file>` is that file.
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const section = readme.slice(
  readme.indexOf("## Running migrations in production"),
  readme.indexOf("\n## ", readme.indexOf("## Running migrations in production") + 3),
);
const sqlBlocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1] as string);
const files = sqlBlocks
  .map((block) => /^-- migrations\/(\S+)\n/.exec(block))
  .filter((match): match is RegExpExecArray => match !== null)
  .map((match) => ({ name: match[1] as string, text: match.input }));
const invalidIndexQuery = sqlBlocks.find((block) => block.startsWith("-- INVALID indexes"));

const dir = mkdtempSync(join(tmpdir(), "migrator-guide-"));
for (const file of files) writeFileSync(join(dir, file.name), file.text);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(backends())("the production guide's examples on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  it("has the files and the query it promises", () => {
    expect(files.map((f) => f.name)).toEqual([
      "2.9.0_users.up.sql",
      "3.0.0_users_full_name_expand.up.sql",
      "3.0.1_users_full_name_index.up.sql",
      "3.1.0_users_full_name_contract.up.sql",
    ]);
    expect(invalidIndexQuery).toContain("NOT i.indisvalid");
  });

  it("renames a column by expand and contract while old and new code write", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, schema, migrations: sqlMigrations(dir) });
    const users = `${schema}.users`;

    await migrator.migrate({ to: "2.9.0" });
    await sql.unsafe(`insert into ${users} (id, name) values (1, 'Ada')`);

    await migrator.migrate({ to: "3.0.1" });
    // The old code writes name, the new code full_name: each sees what the other wrote.
    await sql.unsafe(`insert into ${users} (id, name) values (2, 'Grace')`);
    await sql.unsafe(`insert into ${users} (id, full_name) values (3, 'Edsger')`);
    await sql.unsafe(`update ${users} set name = 'Ada L.' where id = 1`);
    await sql.unsafe(`update ${users} set full_name = 'Grace H.' where id = 2`);
    expect(await sql.unsafe(`select id, name, full_name from ${users} order by id`)).toEqual([
      { id: 1, name: "Ada L.", full_name: "Ada L." },
      { id: 2, name: "Grace H.", full_name: "Grace H." },
      { id: 3, name: "Edsger", full_name: "Edsger" },
    ]);
    const [index] = await sql`
      select i.indisvalid as valid from pg_catalog.pg_index i join pg_catalog.pg_class c on c.oid = i.indexrelid
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and c.relname = 'users_full_name_idx'`;
    expect(index?.valid).toBe(true);

    await migrator.migrate();
    expect(await historyVersions(sql, schema)).toEqual(["2.9.0", "3.0.0", "3.0.1", "3.1.0"]);
    expect(await sql.unsafe(`select * from ${users} order by id`)).toEqual([
      { id: 1, full_name: "Ada L." },
      { id: 2, full_name: "Grace H." },
      { id: 3, full_name: "Edsger" },
    ]);
  });

  it("spots an INVALID index with the README's query", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await sql.unsafe(
      `create schema ${schema}; create table ${schema}.t (id int); insert into ${schema}.t values (1), (1)`,
    );
    await expect(
      sql.unsafe(`create unique index concurrently t_id on ${schema}.t (id)`),
    ).rejects.toMatchObject({
      code: "23505",
    });
    const rows = await sql.unsafe(invalidIndexQuery as string);
    expect(rows.filter((row) => String(row.index).startsWith(`${schema}.`))).toEqual([
      { index: `${schema}.t_id`, definition: `CREATE UNIQUE INDEX t_id ON ${schema}.t USING btree (id)` },
    ]);
  });
});
