import { ConfigError } from "@agent-platform/common";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import { backends, historyVersions, tableMigration, tablesIn, useFreshSchema } from "../test/support.js";
import { DuplicateVersionError, InvalidVersionError, UnknownVersionError } from "./errors.js";
import { createMigrator } from "./migrator.js";
import type { Migration } from "./types.js";

const migrations = [
  tableMigration("1.0.0", "users"),
  tableMigration("v1.1.0", "sessions"),
  tableMigration("1.2.0", "messages"),
  // 1.10.0 sorts after 1.9.0 as a semantic version, although it sorts before it as text.
  tableMigration("1.10.0", "summaries"),
  tableMigration("1.9.0", "agents"),
];

describe.each(backends())("migrate() on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  it("takes a fresh database to the latest version, in semantic-version order", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const { logger, records } = recordingLogger();
    const migrator = createMigrator({ sql, migrations, schema, logger: logger.child({ db_id: "main" }) });

    const result = await migrator.migrate();

    expect(result).toEqual({
      from: null,
      to: "1.10.0",
      direction: "up",
      applied: ["1.0.0", "1.1.0", "1.2.0", "1.9.0", "1.10.0"],
      // One transaction, committed at its first attempt.
      segments: [
        {
          versions: ["1.0.0", "1.1.0", "1.2.0", "1.9.0", "1.10.0"],
          transactional: true,
          attempts: [{ outcome: "committed", durationMs: expect.any(Number), relation: null }],
        },
      ],
    });
    expect(await tablesIn(sql, schema)).toEqual([
      "schema_migrations",
      "t_agents",
      "t_messages",
      "t_sessions",
      "t_summaries",
      "t_users",
    ]);
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.10.0", "1.2.0", "1.9.0"]);
    // Each event is one record: its level's method, its fields, the message `migration <event>`.
    const migrated = records.filter((record) => record.event === "migrated");
    expect(migrated.map((record) => record.version)).toEqual(result.applied);
    expect(migrated[0]).toEqual({
      level: 30,
      db_id: "main",
      event: "migrated",
      version: "1.0.0",
      name: "users",
      direction: "up",
      durationMs: expect.any(Number),
      msg: "migration migrated",
    });
    expect(records.map((record) => record.event)).toEqual([
      "lock_acquired",
      "plan",
      ...result.applied.flatMap(() => ["migrating", "migrated"]),
      "committed",
    ]);
    const status = await migrator.status();
    expect(status.current).toBe("1.10.0");
    expect(status.latest).toBe("1.10.0");
    expect(status.pending).toEqual([]);
    expect(status.applied.map((a) => a.version)).toEqual(["1.0.0", "1.1.0", "1.2.0", "1.9.0", "1.10.0"]);
    expect(status.applied[0]?.appliedAt).toBeInstanceOf(Date);
    // Code migrations without `source` or `checksum` are recorded without one.
    expect(status.applied[0]?.checksum).toBeNull();
  });

  it("goes down to a middle version, newest first, and back up", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, migrations, schema });
    await migrator.migrate();

    const down = await migrator.migrate({ to: "v1.1.0" });
    expect(down).toEqual({
      from: "1.10.0",
      to: "1.1.0",
      direction: "down",
      applied: ["1.10.0", "1.9.0", "1.2.0"],
      segments: [
        { versions: ["1.10.0", "1.9.0", "1.2.0"], transactional: true, attempts: [expect.anything()] },
      ],
    });
    expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_sessions", "t_users"]);
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0"]);
    const status = await migrator.status();
    expect(status.current).toBe("1.1.0");
    expect(status.pending.map((m) => m.version)).toEqual(["1.2.0", "1.9.0", "1.10.0"]);

    const up = await migrator.migrate({ to: "1.9.0" });
    expect(up).toMatchObject({ from: "1.1.0", to: "1.9.0", direction: "up", applied: ["1.2.0", "1.9.0"] });
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0", "1.9.0"]);
    expect(await tablesIn(sql, schema)).not.toContain("t_summaries");
  });

  it("is a no-op at the target version and reports direction none", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, migrations, schema });
    await migrator.migrate({ to: "1.2.0" });

    expect(await migrator.migrate({ to: "1.2.0" })).toEqual({
      from: "1.2.0",
      to: "1.2.0",
      direction: "none",
      applied: [],
      segments: [],
    });
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
  });

  it("rejects unknown and malformed target versions before touching the database", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, migrations, schema });

    await expect(migrator.migrate({ to: "1.3.0" })).rejects.toMatchObject({
      code: "UNKNOWN_VERSION",
      version: "1.3.0",
    });
    await expect(migrator.migrate({ to: "1.3.0" })).rejects.toBeInstanceOf(UnknownVersionError);
    for (const bad of ["1.2", "latest", "1.2.0.0", "01.2.0", "1.2.0+build", "", " 1.2.0"]) {
      await expect(migrator.migrate({ to: bad })).rejects.toBeInstanceOf(InvalidVersionError);
    }
    // Nothing was created, not even the schema.
    const [row] = await sql`select count(*)::int as n from pg_catalog.pg_namespace where nspname = ${schema}`;
    expect(row?.n).toBe(0);
  });

  it("reports status of a database that was never migrated without creating anything", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const status = await createMigrator({ sql, migrations, schema }).status();
    expect(status).toEqual({
      current: null,
      latest: "1.10.0",
      applied: [],
      pending: [migrations[0], migrations[1], migrations[2], migrations[4], migrations[3]],
      invalidIndexes: [],
      lock: null,
    });
    expect(await tablesIn(sql, schema)).toEqual([]);
  });

  it("says in status whether a run holds the migration lock now, its session and since when", async () => {
    const { sql, kind } = current();
    const schema = freshSchema();
    let entered: () => void = () => {};
    let open: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const held: Migration = {
      version: "1.0.0",
      name: "held",
      up: async ({ sql: run }) => {
        await run`create table t_held (id int)`;
        entered();
        await gate;
      },
    };
    const before = new Date(Date.now() - 1_000);
    const run = createMigrator({
      sql,
      migrations: [held, tableMigration("1.1.0", "after")],
      schema,
    }).migrate();
    await inside;
    // PGlite has one session and the file's pool one connection: the status waits behind the run there.
    const status =
      kind === "postgres" ? await createMigrator({ sql, migrations: [held], schema }).status() : null;
    open();
    await run;
    if (status) {
      expect(status.lock).toEqual({ pid: expect.any(Number), since: expect.any(Date) });
      expect(status.lock?.since?.getTime()).toBeGreaterThanOrEqual(before.getTime());
      expect(status.pending.map((m) => m.version)).toEqual(["1.0.0"]);
    }
    expect((await createMigrator({ sql, migrations: [held], schema }).status()).lock).toBeNull();
  });

  it("keeps the history in the configured table", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await createMigrator({ sql, migrations, schema, table: "History_Table" }).migrate({ to: "1.0.0" });
    expect(await historyVersions(sql, schema, "History_Table")).toEqual(["1.0.0"]);
  });
});

describe.each(backends())("base and steps on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);
  const three = [tableMigration("1.0.0", "a"), tableMigration("1.1.0", "b"), tableMigration("1.2.0", "c")];

  it("reverts every migration, the first included, with to: base, and comes back up", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, migrations: three, schema });
    await migrator.migrate();

    expect(await migrator.migrate({ to: "base" })).toEqual({
      from: "1.2.0",
      to: null,
      direction: "down",
      applied: ["1.2.0", "1.1.0", "1.0.0"],
      segments: [
        { versions: ["1.2.0", "1.1.0", "1.0.0"], transactional: true, attempts: [expect.anything()] },
      ],
    });
    expect(await tablesIn(sql, schema)).toEqual(["schema_migrations"]);
    expect(await historyVersions(sql, schema)).toEqual([]);
    expect((await migrator.status()).current).toBeNull();
    expect((await migrator.migrate({ to: "base" })).direction).toBe("none");

    expect((await migrator.migrate()).applied).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
    expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_a", "t_b", "t_c"]);
  });

  it("moves by steps both ways, stopping at the latest and at base", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, migrations: three, schema });

    expect(await migrator.migrate({ steps: 2 })).toMatchObject({
      from: null,
      to: "1.1.0",
      applied: ["1.0.0", "1.1.0"],
    });
    expect(await migrator.migrate({ steps: -1 })).toMatchObject({
      to: "1.0.0",
      direction: "down",
      applied: ["1.1.0"],
    });
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
    expect(await migrator.migrate({ steps: 5 })).toMatchObject({ to: "1.2.0", applied: ["1.1.0", "1.2.0"] });
    expect((await migrator.migrate({ steps: 1 })).direction).toBe("none");
    expect(await migrator.migrate({ steps: -9, dryRun: true })).toMatchObject({
      to: null,
      applied: ["1.2.0", "1.1.0", "1.0.0"],
    });
    expect(await migrator.migrate({ steps: -3 })).toMatchObject({
      to: null,
      applied: ["1.2.0", "1.1.0", "1.0.0"],
    });
    expect(await tablesIn(sql, schema)).toEqual(["schema_migrations"]);
  });

  it("refuses to and steps together, and steps that are not a non-zero integer, before touching the database", async () => {
    const migrator = createMigrator({ sql: current().sql, migrations: three, schema: freshSchema() });
    for (const options of [{ to: "1.0.0", steps: 1 }, { steps: 0 }, { steps: 1.5 }, { steps: Number.NaN }]) {
      await expect(migrator.migrate(options)).rejects.toMatchObject({
        code: "CONFIG_INVALID",
        component: "migrator",
        option: "steps",
      });
    }
    await expect(migrator.migrate({ to: "Base" })).rejects.toMatchObject({ code: "INVALID_VERSION" });
  });
});

describe.each(backends())("round trips on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);
  const trivial: Migration[] = Array.from({ length: 200 }, (_, i) => ({
    version: `1.0.${i}`,
    name: `t${i}`,
    up: ({ sql }) => sql`create table ${sql(`t${i}`)} (id int)`,
  }));

  it("runs 200 migrations with one query each plus a fixed few, and a no-op migrate() in 3", async () => {
    const schema = freshSchema();
    const queries: string[] = [];
    const sql = postgres(current().url, {
      max: 1,
      onnotice: () => {},
      debug: (_c, query) => queries.push(query),
    });
    try {
      await sql`select 1`;
      const migrator = createMigrator({ sql, migrations: trivial, schema });

      queries.length = 0;
      expect((await migrator.migrate()).applied).toHaveLength(200);
      // lock, read, begin, search_path, schema check, create schema, create table, 200 DDL, insert, commit, unlock
      expect(queries.length).toBeLessThanOrEqual(200 + 10);

      queries.length = 0;
      expect((await migrator.migrate()).direction).toBe("none");
      expect(queries).toHaveLength(3);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});

describe("createMigrator options", () => {
  const sql = postgres({ max: 1 }); // never connects: construction does no I/O
  const migrations = [tableMigration("1.0.0", "a"), tableMigration("1.1.0", "b")];

  it("rejects duplicate versions, also when they differ only by a leading v", () => {
    const duplicate = [...migrations, tableMigration("v1.1.0", "again")];
    expect(() => createMigrator({ sql, migrations: duplicate })).toThrow(DuplicateVersionError);
    expect(() => createMigrator({ sql, migrations: duplicate })).toThrow(/1\.1\.0 appears more than once/);
  });

  it("rejects malformed versions in the list", () => {
    const bad = [...migrations, tableMigration("2.0", "short")];
    expect(() => createMigrator({ sql, migrations: bad })).toThrow(InvalidVersionError);
  });

  it.each([
    ["schema", { schema: 'public"; drop table x; --' }],
    ["schema", { schema: "a.b" }],
    ["schema", { schema: "" }],
    ["table", { table: "1table" }],
    ["table", { table: "x".repeat(64) }],
    ["lockTimeoutMs", { lockTimeoutMs: -1 }],
    ["lockTimeoutMs", { lockTimeoutMs: Number.NaN }],
    ["lockTimeoutMs", { lockTimeoutMs: 2 ** 31 }],
    ["ddlLockTimeoutMs", { ddlLockTimeoutMs: -1 }],
    ["ddlLockTimeoutMs", { ddlLockTimeoutMs: 1.5 }],
    ["ddlLockTimeoutMs", { ddlLockTimeoutMs: "5000" as unknown as number }],
    ["statementTimeoutMs", { statementTimeoutMs: 2 ** 31 }],
    ["statementTimeoutMs", { statementTimeoutMs: Number.POSITIVE_INFINITY }],
    ["indexBuildTimeoutMs", { indexBuildTimeoutMs: -1 }],
    ["retry", { retry: true as never }],
    ["retry", { retry: null as never }],
    ["retry", { retry: { attemps: 3 } as never }],
    ["retry", { retry: { toString: 3 } as never }],
    ["retry.attempts", { retry: { attempts: 0 } }],
    ["retry.attempts", { retry: { attempts: 101 } }],
    ["retry.attempts", { retry: { attempts: 2.5 } }],
    ["retry.baseMs", { retry: { baseMs: -1 } }],
    ["retry.maxMs", { retry: { maxMs: Number.NaN } }],
    ["retry.maxMs", { retry: { maxMs: 3_600_001 } }],
    // The logger before the shared shape (a function of events) is refused rather than ignored.
    ["logger", { logger: (() => {}) as never }],
  ])("rejects a bad %s before any SQL is built", (option, extra) => {
    expect(() => createMigrator({ sql, migrations, ...extra })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", component: "migrator", option }),
    );
    expect(() => createMigrator({ sql, migrations, ...extra })).toThrow(new RegExp(option));
  });

  it("takes the largest timeouts PostgreSQL and Node both accept, and 0", () => {
    const max = 2 ** 31 - 1;
    expect(() =>
      createMigrator({ sql, migrations, lockTimeoutMs: max, ddlLockTimeoutMs: max, statementTimeoutMs: max }),
    ).not.toThrow();
    expect(() =>
      createMigrator({ sql, migrations, lockTimeoutMs: 0, ddlLockTimeoutMs: 0, statementTimeoutMs: 0 }),
    ).not.toThrow();
  });

  it("rejects a checksum together with source, and checksums that are not short printable text", () => {
    const up: Migration["up"] = ({ sql }) => sql`select 1`;
    const withChecksum = (checksum: unknown, extra: Partial<Migration> = {}) => [
      { version: "1.0.0", name: "a", up, checksum, ...extra } as Migration,
    ];
    expect(() => createMigrator({ sql, migrations: withChecksum("v1", { source: "select 1" }) })).toThrow(
      /both source and checksum/,
    );
    for (const bad of ["", " v1", "v1\n", "x".repeat(129), "é", 42]) {
      expect(() => createMigrator({ sql, migrations: withChecksum(bad) })).toThrow(ConfigError);
    }
    expect(() => createMigrator({ sql, migrations: withChecksum("x".repeat(128)) })).not.toThrow();
    expect(() => createMigrator({ sql, migrations: withChecksum("2024-05-01 add users") })).not.toThrow();
  });

  it("rejects an empty list, a missing up and a non-postgres.js sql", () => {
    expect(() => createMigrator({ sql, migrations: [] })).toThrow(ConfigError);
    const noUp = [{ version: "1.0.0", name: "x" }] as unknown as Migration[];
    expect(() => createMigrator({ sql, migrations: noUp })).toThrow(/needs an up function/);
    expect(() => createMigrator({ sql: {} as never, migrations })).toThrow(/postgres\.js/);
  });
});
