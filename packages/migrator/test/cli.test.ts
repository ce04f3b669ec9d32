import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, requireBuiltCli } from "./cli-process.js";
import { historyVersions, TEST_DATABASE_URL, tablesIn, useBackend, useFreshSchema } from "./support.js";

const dir = mkdtempSync(join(tmpdir(), "migrator-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "1.0.0_users.up.sql"), "create table users (id int);");
writeFileSync(join(dir, "1.0.0_users.down.sql"), "drop table users;");
writeFileSync(join(dir, "1.1.0_sessions.up.sql"), "create table sessions (id int);");
writeFileSync(join(dir, "1.1.0_sessions.down.sql"), "drop table sessions;");
writeFileSync(join(dir, "1.2.0_messages.up.sql"), "create table messages (id int);");
writeFileSync(join(dir, "1.2.0_messages.down.sql"), "drop table messages;");

requireBuiltCli();

describe("platform-migrate without a database", () => {
  it.each([
    [[], /missing command/],
    [["sideways"], /unknown command "sideways"/],
    [
      ["down", "--dir", dir, "--database-url", "postgres://x@127.0.0.1/x"],
      /down needs --to <version\|base> or --steps <n>/,
    ],
    [
      ["up", "--to", "1.0.0", "--steps", "1", "--database-url", "postgres://x@127.0.0.1/x"],
      /either --to or --steps/,
    ],
    [
      ["down", "--steps=-1", "--database-url", "postgres://x@127.0.0.1/x"],
      /--steps needs a positive whole number/,
    ],
    [
      ["down", "--steps", "0", "--database-url", "postgres://x@127.0.0.1/x"],
      /--steps needs a positive whole number/,
    ],
    [["create"], /create needs a name/],
    [["status", "--dir", dir], /no database: pass --database-url or set DATABASE_URL/],
    [["up", "--bogus"], /Unknown option '--bogus'/],
    [
      ["up", "--lock-timeout-ms", "soon", "--database-url", "postgres://x@127.0.0.1/x"],
      /--lock-timeout-ms needs a whole number of milliseconds/,
    ],
    [
      ["up", "--ddl-lock-timeout-ms", "1e3", "--database-url", "postgres://x@127.0.0.1/x"],
      /--ddl-lock-timeout-ms needs a whole number of milliseconds, got "1e3"/,
    ],
    [
      ["up", "--statement-timeout-ms=-5", "--database-url", "postgres://x@127.0.0.1/x"],
      /--statement-timeout-ms needs a whole number of milliseconds, got "-5"/,
    ],
    [
      ["up", "--retry-attempts", "two", "--database-url", "postgres://x@127.0.0.1/x"],
      /--retry-attempts needs a whole number, got "two"/,
    ],
    [
      ["up", "--retry-max-ms", "0x10", "--database-url", "postgres://x@127.0.0.1/x"],
      /--retry-max-ms needs a whole number of milliseconds, got "0x10"/,
    ],
  ])("exits 2 with the usage for %j", async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain("Usage: platform-migrate");
  });

  it.each([
    ["--ddl-lock-timeout-ms", "ddlLockTimeoutMs"],
    ["--statement-timeout-ms", "statementTimeoutMs"],
    ["--lock-timeout-ms", "lockTimeoutMs"],
  ])("exits 1 with CONFIG_INVALID for %s beyond what PostgreSQL takes", async (flag, option) => {
    const run = await cli(["up", "--json", flag, "2147483648", "--dir", dir], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
    });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toEqual({
      error: {
        code: "CONFIG_INVALID",
        message: `\`${option}\` must be a whole number of milliseconds from 0 to 2147483647; got 2147483648`,
      },
    });
  });

  it.each([
    ["--retry-attempts", "0", "`retry.attempts` must be a whole number from 1 to 100; got 0"],
    ["--retry-attempts", "101", "`retry.attempts` must be a whole number from 1 to 100; got 101"],
    ["--retry-max-ms", "3600001", "`retry.maxMs` must be a whole number from 0 to 3600000; got 3600001"],
    [
      "--index-build-timeout-ms",
      "2147483648",
      "`indexBuildTimeoutMs` must be a whole number of milliseconds from 0 to 2147483647; got 2147483648",
    ],
  ])("exits 1 with CONFIG_INVALID for %s %s", async (flag, value, message) => {
    const run = await cli(["up", "--json", flag, value, "--dir", dir], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
    });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toEqual({ error: { code: "CONFIG_INVALID", message } });
  });

  it("exits 1 with the shared configuration error's code for options the migrator refuses", async () => {
    const args = ["status", "--dir", dir, "--schema", "a.b", "--database-url", "postgres://x@127.0.0.1:1/x"];
    const json = await cli([...args, "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({
      error: {
        code: "CONFIG_INVALID",
        message: expect.stringMatching(/^`schema` must be a plain identifier/),
      },
    });
    const text = await cli(args);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/^platform-migrate: `schema` must be a plain identifier[^\n]*\n$/);
  });

  it("exits 1 with one line, no stack, when the database is unreachable", async () => {
    const run = await cli(["status", "--dir", dir], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe("platform-migrate: connect ECONNREFUSED 127.0.0.1:1");
  });
});

describe.skipIf(!TEST_DATABASE_URL)("platform-migrate end to end on real PostgreSQL", () => {
  const current = useBackend("postgres");
  const freshSchema = useFreshSchema(current);

  it("shows status, applies up to a version, dry-runs, goes down and back up", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    const common = ["--dir", dir, "--schema", schema];
    const env = { DATABASE_URL: url };

    const before = await cli(["status", ...common], env);
    expect(before).toMatchObject({ code: 0, stderr: "" });
    expect(before.stdout).toContain("current: (none)");
    expect(before.stdout).toMatch(
      /pending:\n {2}1\.0\.0 {2}users\n {2}1\.1\.0 {2}sessions\n {2}1\.2\.0 {2}messages/,
    );

    const up = await cli(["up", "--to", "v1.1.0", ...common], env);
    expect(up).toMatchObject({ code: 0, stdout: "Migrated base -> 1.1.0: applied 1.0.0, 1.1.0.\n" });
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0"]);

    const dryRun = await cli(["up", "--dry-run", "--json", ...common], env);
    expect(JSON.parse(dryRun.stdout)).toEqual({
      from: "1.1.0",
      to: "1.2.0",
      direction: "up",
      applied: ["1.2.0"],
      segments: [{ versions: ["1.2.0"], transactional: true, attempts: [] }],
      dryRun: true,
    });
    expect(await tablesIn(sql, schema)).not.toContain("messages");

    const status = JSON.parse((await cli(["status", "--json", ...common], { DATABASE_URL: url })).stdout);
    expect(status).toMatchObject({
      current: "1.1.0",
      latest: "1.2.0",
      pending: [{ version: "1.2.0" }],
      lock: null,
    });
    expect(status.applied.map((a: { version: string }) => a.version)).toEqual(["1.0.0", "1.1.0"]);

    const down = await cli(["down", "--to", "1.0.0", "--database-url", url, ...common]);
    expect(down).toMatchObject({ code: 0, stdout: "Migrated 1.1.0 -> 1.0.0: reverted 1.1.0.\n" });
    expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "users"]);

    expect((await cli(["up", ...common], env)).stdout).toBe(
      "Migrated 1.0.0 -> 1.2.0: applied 1.1.0, 1.2.0.\n",
    );
    expect((await cli(["up", ...common], env)).stdout).toBe("Already at 1.2.0; nothing to do.\n");
  });

  it("status --json lists versions, names, checksums and state without the SQL unless --with-sql", async () => {
    const { url } = current();
    const common = ["--dir", dir, "--schema", freshSchema(), "--database-url", url];
    await cli(["up", "--to", "1.0.0", ...common]);
    const plain = await cli(["status", "--json", ...common]);
    expect(plain.stdout).not.toContain("create table");
    const status = JSON.parse(plain.stdout);
    expect(status.applied).toEqual([
      expect.objectContaining({
        version: "1.0.0",
        name: "users",
        checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
        state: "applied",
      }),
    ]);
    expect(status.pending[0]).toEqual({
      version: "1.1.0",
      name: "sessions",
      checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
      state: "pending",
    });
    const withSql = JSON.parse((await cli(["status", "--json", "--with-sql", ...common])).stdout);
    expect(withSql.pending[0].sql).toBe("create table sessions (id int);");
  });

  it("down --to base reverts the first migration too; --steps moves both ways", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    const common = ["--dir", dir, "--schema", schema, "--database-url", url];
    expect((await cli(["up", "--steps", "2", ...common])).stdout).toBe(
      "Migrated base -> 1.1.0: applied 1.0.0, 1.1.0.\n",
    );
    expect((await cli(["down", "--steps", "1", ...common])).stdout).toBe(
      "Migrated 1.1.0 -> 1.0.0: reverted 1.1.0.\n",
    );
    expect((await cli(["down", "--to", "base", ...common])).stdout).toBe(
      "Migrated 1.0.0 -> base: reverted 1.0.0.\n",
    );
    expect(await historyVersions(sql, schema)).toEqual([]);
    expect(await tablesIn(sql, schema)).toEqual(["schema_migrations"]);
    expect((await cli(["up", "--to", "base", ...common])).stdout).toBe("Already at base; nothing to do.\n");
  });

  it("create writes the next patch version's files, which then run up and down", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    const own = mkdtempSync(join(tmpdir(), "migrator-create-"));
    try {
      writeFileSync(join(own, "2.5.6_first.up.sql"), "create table first (id int);");
      const created = await cli(["create", "add_notes", "--dir", own]);
      expect(created).toMatchObject({ code: 0, stderr: "" });
      expect(created.stdout).toBe(
        `Created ${join(own, "2.5.7_add_notes.up.sql")}\nCreated ${join(own, "2.5.7_add_notes.down.sql")}\n`,
      );
      writeFileSync(join(own, "2.5.7_add_notes.up.sql"), "create table notes (id int);");
      writeFileSync(join(own, "2.5.7_add_notes.down.sql"), "drop table notes;");
      const common = ["--dir", own, "--schema", schema, "--database-url", url];
      expect((await cli(["up", ...common])).code).toBe(0);
      expect(await tablesIn(sql, schema)).toEqual(["first", "notes", "schema_migrations"]);
      expect((await cli(["down", "--steps", "1", ...common])).code).toBe(0);
      expect(await tablesIn(sql, schema)).toEqual(["first", "schema_migrations"]);

      const explicit = await cli(["create", "later", "--version", "3.0.0", "--dir", own, "--json"]);
      expect(JSON.parse(explicit.stdout)).toMatchObject({ version: "3.0.0" });
      for (const [version, message] of [
        ["3.0.0", /already has a migration with version 3\.0\.0/],
        ["2.9.0", /below the highest existing version 3\.0\.0/],
      ] as const) {
        const refused = await cli(["create", "again", "--version", version, "--dir", own]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(message);
      }
      const badName = await cli(["create", "../escape", "--dir", own]);
      expect(badName.code).toBe(1);
      expect(badName.stderr).toMatch(/must be 1-100 letters/);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("refuses up to a version below the current one, and down to one above", async () => {
    const { url } = current();
    const schema = freshSchema();
    const common = ["--dir", dir, "--schema", schema, "--database-url", url];
    await cli(["up", "--to", "1.1.0", ...common]);

    const up = await cli(["up", "--to", "1.0.0", ...common]);
    expect(up.code).toBe(2);
    expect(up.stderr).toContain("1.0.0 is below the current version 1.1.0; use down --to 1.0.0");
    const down = await cli(["down", "--to", "1.2.0", ...common]);
    expect(down.code).toBe(2);
    expect(down.stderr).toContain("1.2.0 is above the current version 1.1.0; use up --to 1.2.0");
  });

  it("exits 1 with the error code and message, no stack, when a migration fails", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    const broken = mkdtempSync(join(tmpdir(), "migrator-cli-broken-"));
    try {
      writeFileSync(join(broken, "1.0.0_users.up.sql"), "create table users (id int);");
      writeFileSync(join(broken, "1.1.0_bad.up.sql"), "create table ok (id int); select * from missing;");
      const common = ["--dir", broken, "--schema", schema, "--database-url", url];

      const text = await cli(["up", ...common]);
      expect(text.code).toBe(1);
      expect(text.stderr.trim()).toBe(
        'platform-migrate: Migration 1.1.0 (bad) failed while running up: relation "missing" does not exist',
      );
      const json = await cli(["up", "--json", ...common]);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stderr)).toEqual({
        error: {
          code: "MIGRATION_FAILED",
          message: 'Migration 1.1.0 (bad) failed while running up: relation "missing" does not exist',
        },
      });
      expect(await tablesIn(sql, schema)).toEqual([]);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });
  it("exits 1 with DDL_LOCK_TIMEOUT when another session holds a table the migration changes", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    const common = ["--dir", dir, "--schema", schema, "--database-url", url];
    await cli(["up", "--to", "1.0.0", ...common]);
    const holder = await sql.reserve();
    try {
      await holder`begin`;
      await holder`lock table ${sql(schema)}.users in access exclusive mode`;
      const altering = mkdtempSync(join(tmpdir(), "migrator-cli-lock-"));
      try {
        writeFileSync(join(altering, "1.0.0_users.up.sql"), "create table users (id int);");
        writeFileSync(join(altering, "1.1.0_email.up.sql"), "alter table users add column email text;");
        const run = await cli([
          "up",
          "--json",
          "--ddl-lock-timeout-ms",
          "300",
          "--retry-attempts",
          "2",
          "--retry-max-ms",
          "50",
          ...common.map((arg) => (arg === dir ? altering : arg)),
        ]);
        expect(run.code).toBe(1);
        const { error } = JSON.parse(run.stderr);
        expect(error.code).toBe("DDL_LOCK_TIMEOUT");
        // The relation is named from a second connection that watched the wait.
        expect(error.message).toMatch(
          new RegExp(
            `^Migration 1\\.1\\.0 \\(email\\) could not lock ${schema}\\.users within 300 ms \\(each of 2 attempts\\)`,
          ),
        );
      } finally {
        rmSync(altering, { recursive: true, force: true });
      }
    } finally {
      await holder`rollback`;
      holder.release();
    }
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
  });

  it("drops the INVALID index of a failed concurrent build and names it in the error", async () => {
    const { url } = current();
    const schema = freshSchema();
    const indexing = mkdtempSync(join(tmpdir(), "migrator-cli-index-"));
    try {
      writeFileSync(
        join(indexing, "1.0.0_users.up.sql"),
        "create table users (id int); insert into users values (1), (1);",
      );
      writeFileSync(
        join(indexing, "1.1.0_unique.up.sql"),
        "-- platform-migrate: no-transaction\ncreate unique index concurrently users_id on users (id);",
      );
      const common = ["--dir", indexing, "--schema", schema, "--database-url", url];
      const run = await cli(["up", "--retry-attempts", "2", "--retry-max-ms", "20", ...common]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `CREATE INDEX CONCURRENTLY users_id failed after 2 attempts (could not create unique index "users_id"); the INVALID index it left (${schema}.users_id) was dropped`,
      );
      const json = JSON.parse((await cli(["status", "--json", ...common])).stdout);
      expect(json.invalidIndexes).toEqual([]);

      // One left by hand (outside the migrator) is listed, with the fix.
      const { sql } = current();
      await expect(
        sql.unsafe(`create unique index concurrently users_id on ${schema}.users (id)`),
      ).rejects.toMatchObject({ code: "23505" });
      const text = await cli(["status", ...common]);
      expect(text.stdout).toMatch(
        new RegExp(`invalid indexes \\(.*DROP INDEX CONCURRENTLY.*\\):\\n {2}${schema}\\.users_id`),
      );
    } finally {
      rmSync(indexing, { recursive: true, force: true });
    }
  });
});
