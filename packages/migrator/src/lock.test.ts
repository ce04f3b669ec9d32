import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import {
  backends,
  historyVersions,
  TEST_DATABASE_URL,
  tablesIn,
  useBackend,
  useFreshSchema,
} from "../test/support.js";
import { LockTimeoutError } from "./errors.js";
import { createMigrator } from "./migrator.js";
import type { Migration } from "./types.js";

/** Migrations that count their runs and fail if run twice (plain CREATE TABLE), slow enough to overlap. */
function countedMigrations(runs: Map<string, number>): Migration[] {
  return ["1.0.0", "1.1.0", "1.2.0", "2.0.0"].map((version, i) => ({
    version,
    name: `step_${i}`,
    up: async ({ sql }) => {
      runs.set(version, (runs.get(version) ?? 0) + 1);
      await sql`create table ${sql(`t_${i}`)} (id int)`;
      await sql`select pg_sleep(0.05)`;
    },
  }));
}

const lockKey = (schema: string) => `${schema}.schema_migrations`;

describe.skipIf(!TEST_DATABASE_URL).each([2, 8])(
  "%i concurrent migrate() calls on real PostgreSQL",
  (callers) => {
    const current = useBackend("postgres");
    const freshSchema = useFreshSchema(current);

    it("each on its own client apply every migration exactly once and all succeed", async () => {
      const schema = freshSchema();
      const runs = new Map<string, number>();
      const migrations = countedMigrations(runs);
      const clients = Array.from({ length: callers }, () =>
        postgres(TEST_DATABASE_URL as string, { max: 1, onnotice: () => {} }),
      );
      try {
        const results = await Promise.all(
          clients.map((sql) => createMigrator({ sql, migrations, schema, lockTimeoutMs: 20_000 }).migrate()),
        );

        expect([...runs.values()]).toEqual([1, 1, 1, 1]);
        expect(results.every((r) => r.to === "2.0.0")).toBe(true);
        expect(results.flatMap((r) => r.applied).sort()).toEqual(["1.0.0", "1.1.0", "1.2.0", "2.0.0"]);
        expect(results.filter((r) => r.direction === "none")).toHaveLength(callers - 1);
        expect(await historyVersions(current().sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0", "2.0.0"]);
      } finally {
        await Promise.all(clients.map((sql) => sql.end({ timeout: 5 })));
      }
    });
  },
);

describe.skipIf(!TEST_DATABASE_URL)("lock timeout on real PostgreSQL", () => {
  const current = useBackend("postgres");
  const freshSchema = useFreshSchema(current);

  it("gives up with LockTimeoutError while another session holds the lock, then runs once it is free", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const { logger, records } = recordingLogger();
    const migrator = createMigrator({
      sql,
      migrations: countedMigrations(new Map()),
      schema,
      lockTimeoutMs: 300,
      logger,
    });
    const holder = await sql.reserve();
    try {
      await holder`select pg_advisory_lock(hashtext('@agent-platform/migrator'), hashtext(${lockKey(schema)}))`;
      const error = await migrator.migrate().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect(error).toMatchObject({ code: "LOCK_TIMEOUT", timeoutMs: 300 });
      expect(records.map((record) => record.event)).toEqual(["lock_waiting"]);
      expect(await tablesIn(sql, schema)).toEqual([]);
    } finally {
      await holder`select pg_advisory_unlock_all()`;
      holder.release();
    }
    expect((await migrator.migrate()).applied).toHaveLength(4);
  });

  it("locks per history table: another schema migrates meanwhile", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const holder = await sql.reserve();
    try {
      await holder`select pg_advisory_lock(hashtext('@agent-platform/migrator'), hashtext(${lockKey("elsewhere")}))`;
      const result = await createMigrator({
        sql,
        migrations: countedMigrations(new Map()),
        schema,
      }).migrate();
      expect(result.applied).toHaveLength(4);
    } finally {
      await holder`select pg_advisory_unlock_all()`;
      holder.release();
    }
  });
});

describe.each(backends())("waiting for the connection on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  it("serialises concurrent calls on one client: each migration runs once", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const runs = new Map<string, number>();
    const migrations = countedMigrations(runs);
    const results = await Promise.all(
      [1, 2, 3].map(() => createMigrator({ sql, migrations, schema }).migrate()),
    );
    expect([...runs.values()]).toEqual([1, 1, 1, 1]);
    expect(results.flatMap((r) => r.applied)).toHaveLength(4);
  });

  it("counts the wait for a pool connection against lockTimeoutMs and does not keep the late connection", async () => {
    const { sql, kind } = current();
    const schema = freshSchema();
    // Occupy every connection of the pool.
    const size = kind === "pglite" ? 1 : 4;
    const held = await Promise.all(Array.from({ length: size }, () => sql.reserve()));
    const migrator = createMigrator({
      sql,
      migrations: countedMigrations(new Map()),
      schema,
      lockTimeoutMs: 200,
    });
    try {
      await expect(migrator.migrate()).rejects.toBeInstanceOf(LockTimeoutError);
    } finally {
      for (const connection of held) connection.release();
    }
    // The reservation that arrived late was handed back, so the pool is usable.
    expect((await migrator.migrate()).applied).toHaveLength(4);
    const [row] = await sql`select 1 as one`;
    expect(row?.one).toBe(1);
  });
});
