import type { Logger } from "@agent-platform/common";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { DdlLockTimeoutError } from "../src/errors.js";
import { createMigrator } from "../src/migrator.js";
import type { Migration, MigratorEvent } from "../src/types.js";
import { historyVersions, TEST_DATABASE_URL, useBackend, useFreshSchema } from "./support.js";

type Fields = { event: MigratorEvent["event"] } & Record<string, unknown>;

/** A logger handing every migrator event to `onEvent` (and keeping them). */
function eventLogger(onEvent: (event: Fields) => void) {
  const events: Fields[] = [];
  const record = (fields: object | string) => {
    if (typeof fields !== "object") return;
    events.push(fields as Fields);
    onEvent(fields as Fields);
  };
  const logger: Logger = { debug: record, info: record, warn: record, error: record, child: () => logger };
  return { logger, events };
}

/** Holds `lock table` on `table` in another session until `release()` (idempotent). */
async function holdLock(sql: postgres.Sql, table: string) {
  const holder = await sql.reserve();
  await holder`begin`;
  await holder.unsafe(`lock table ${table} in access share mode`);
  let released: Promise<void> | null = null;
  return {
    release: () => {
      released ??= holder`rollback`.then(() => holder.release());
      return released;
    },
  };
}

const base: Migration = {
  version: "1.0.0",
  name: "users",
  up: ({ sql }) => sql`create table t_users (id int)`,
};

/**
 * `count` pending migrations 1.1.0…1.<count>.0: the one at `blocked` (1-based) adds column `c_<i>` to
 * t_users (the table another session locks), every other one creates table `t_<i>`.
 */
function pending(count: number, blocked: number, transactional: (i: number) => boolean = () => true) {
  return Array.from({ length: count }, (_, k): Migration => {
    const i = k + 1;
    return {
      version: `1.${i}.0`,
      name: `m${i}`,
      transaction: transactional(i),
      up:
        i === blocked
          ? ({ sql }) => sql.unsafe(`alter table t_users add column c_${i} int`)
          : ({ sql }) => sql.unsafe(`create table t_${i} (id int)`),
    };
  });
}

/**
 * The versions whose objects exist (the catalog's view), to compare with the history: 1.0.0 for t_users,
 * 1.i.0 for table t_i or column c_i of t_users.
 */
async function versionsInSchema(sql: postgres.Sql, schema: string, count: number): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables where table_schema = ${schema}
    union all
    select column_name from information_schema.columns where table_schema = ${schema} and table_name = 't_users'`;
  const names = new Set(rows.map((r) => r.name));
  const found = names.has("t_users") ? ["1.0.0"] : [];
  for (let i = 1; i <= count; i++) if (names.has(`t_${i}`) || names.has(`c_${i}`)) found.push(`1.${i}.0`);
  return found.sort();
}

async function invalidIndexCount(sql: postgres.Sql, schema: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_catalog.pg_index i join pg_catalog.pg_class c on c.oid = i.indexrelid
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema} and not i.indisvalid`;
  return row?.n ?? -1;
}

describe.skipIf(!TEST_DATABASE_URL)(
  "a transaction of several migrations retried on a lock (real PostgreSQL)",
  () => {
    const current = useBackend("postgres");
    const freshSchema = useFreshSchema(current);

    it("retries 1.1.0 (create) + 1.2.0 (alter of a table locked ~700 ms) until the lock is gone", async () => {
      const { sql } = current();
      const schema = freshSchema();
      const migrations: Migration[] = [
        base,
        { version: "1.1.0", name: "create_rt", up: ({ sql: run }) => run`create table t_rt (id int)` },
        {
          version: "1.2.0",
          name: "alter_rt",
          up: ({ sql: run }) => run`alter table t_users add column email text`,
        },
      ];
      await createMigrator({ sql, schema, migrations: [base] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      const timer = setTimeout(() => void lock.release(), 700);
      try {
        const result = await createMigrator({
          sql,
          schema,
          migrations,
          ddlLockTimeoutMs: 200,
          retry: { attempts: 5, baseMs: 100, maxMs: 400 },
        }).migrate();
        expect(result.applied).toEqual(["1.1.0", "1.2.0"]);
        const [segment] = result.segments;
        const outcomes = segment?.attempts.map((a) => a.outcome) ?? [];
        // At least two 200 ms waits fit in 700 ms; the lock is gone before the fifth try.
        expect(outcomes.length).toBeGreaterThanOrEqual(3);
        expect(outcomes).toEqual([...outcomes.slice(0, -1).map(() => "lock_timeout"), "committed"]);
        expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
        const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from information_schema.tables where table_schema = ${schema} and table_name = 't_rt'`;
        expect(row?.n).toBe(1);
      } finally {
        clearTimeout(timer);
        await lock.release();
      }
    });

    const ATTEMPTS = 3;
    const cases: { count: number; blocked: number; releaseAfter: number | null }[] = [];
    for (let count = 1; count <= 4; count++) {
      for (const blocked of new Set([1, 2, count].filter((p) => p <= count))) {
        // Released after each attempt that can still be followed by another, and never.
        for (const releaseAfter of [1, 2, null]) cases.push({ count, blocked, releaseAfter });
      }
    }

    it.each(cases)(
      "$count pending, the lock on migration $blocked, released after attempt $releaseAfter",
      async ({ count, blocked, releaseAfter }) => {
        const { sql } = current();
        const schema = freshSchema();
        await createMigrator({ sql, schema, migrations: [base] }).migrate();
        const lock = await holdLock(sql, `${schema}.t_users`);
        const { logger, events } = eventLogger((event) => {
          if (event.event === "retry" && event.attempt === releaseAfter) void lock.release();
        });
        const run = createMigrator({
          sql,
          schema,
          migrations: [base, ...pending(count, blocked)],
          ddlLockTimeoutMs: 60,
          retry: { attempts: ATTEMPTS, baseMs: 40, maxMs: 40 },
          logger,
        })
          .migrate()
          .catch((error: unknown) => error);
        const outcome = await run.finally(() => lock.release());
        const versions = pending(count, blocked).map((m) => m.version);
        const retries = events.filter((e) => e.event === "retry");
        if (releaseAfter === null) {
          expect(outcome).toBeInstanceOf(DdlLockTimeoutError);
          expect(outcome).toMatchObject({ version: `1.${blocked}.0`, attempts: ATTEMPTS, committed: [] });
          expect(retries.map((e) => e.attempt)).toEqual([1, 2]);
          expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
        } else {
          expect(outcome).toMatchObject({ applied: versions });
          const attempts = (outcome as { segments: { attempts: { outcome: string; relation: unknown }[] }[] })
            .segments[0]?.attempts;
          expect(attempts?.map((a) => a.outcome)).toEqual([
            ...Array.from({ length: releaseAfter }, () => "lock_timeout"),
            "committed",
          ]);
          // The relation comes from sampling pg_locks while the attempt waits (best effort: a sample that misses
          // the short wait on a loaded machine leaves it unknown), never another relation.
          const relations = attempts?.map((a) => a.relation);
          expect(relations?.at(-1)).toBeNull();
          for (const relation of relations?.slice(0, -1) ?? [])
            expect([`${schema}.t_users`, null]).toContain(relation);
          expect(relations).toContain(`${schema}.t_users`);
          expect(retries.map((e) => [e.version, e.versions])).toEqual(
            Array.from({ length: releaseAfter }, () => [`1.${blocked}.0`, versions]),
          );
          expect(await historyVersions(sql, schema)).toEqual(["1.0.0", ...versions].sort());
        }
        // Every migration before the blocked one ran once per attempt, rolled back with it.
        const runs = events.filter((e) => e.event === "migrating" && e.version === "1.1.0").length;
        expect(runs).toBe(releaseAfter === null ? ATTEMPTS : releaseAfter + 1);
        expect(await versionsInSchema(sql, schema, count)).toEqual(await historyVersions(sql, schema));
        expect(await invalidIndexCount(sql, schema)).toBe(0);
      },
    );

    it.each([{ releaseAfter: 1 }, { releaseAfter: null }])(
      "mixed segments: an index build outside a transaction, then a locked transaction (released after $releaseAfter)",
      async ({ releaseAfter }) => {
        const { sql } = current();
        const schema = freshSchema();
        await createMigrator({ sql, schema, migrations: [base] }).migrate();
        // 1.1.0 transactional | 1.2.0 index build alone | 1.3.0 create + 1.4.0 alter (blocked) | 1.5.0 alone
        const list = pending(5, 4, (i) => i !== 2 && i !== 5).map((m, k) =>
          k === 1
            ? {
                ...m,
                up: ({ sql: run }: { sql: postgres.ISql }) =>
                  run`create index concurrently i_2 on t_users (id)`,
              }
            : m,
        );
        const lock = await holdLock(sql, `${schema}.t_users`);
        const { logger } = eventLogger((event) => {
          if (event.event === "retry" && event.attempt === releaseAfter) void lock.release();
        });
        const outcome = await createMigrator({
          sql,
          schema,
          migrations: [base, ...list],
          ddlLockTimeoutMs: 60,
          retry: { attempts: 2, baseMs: 40, maxMs: 40 },
          logger,
        })
          .migrate()
          .catch((error: unknown) => error)
          .finally(() => lock.release());
        if (releaseAfter === null) {
          expect(outcome).toBeInstanceOf(DdlLockTimeoutError);
          expect(outcome).toMatchObject({ version: "1.4.0", attempts: 2, committed: ["1.1.0", "1.2.0"] });
          expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
        } else {
          expect(outcome).toMatchObject({
            applied: ["1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0"],
            segments: [
              { versions: ["1.1.0"], transactional: true, attempts: [{ outcome: "committed" }] },
              { versions: ["1.2.0"], transactional: false, attempts: [{ outcome: "committed" }] },
              {
                versions: ["1.3.0", "1.4.0"],
                transactional: true,
                attempts: [{ outcome: "lock_timeout" }, { outcome: "committed" }],
              },
              { versions: ["1.5.0"], transactional: false, attempts: [{ outcome: "committed" }] },
            ],
          });
        }
        const history = await historyVersions(sql, schema);
        const objects = await versionsInSchema(sql, schema, 5);
        // 1.2.0's object is an index, not a table or column: compare the rest, then the index itself.
        expect(objects).toEqual(history.filter((v) => v !== "1.2.0"));
        const [index] = await sql<{ valid: boolean }[]>`
        select i.indisvalid as valid from pg_catalog.pg_index i join pg_catalog.pg_class c on c.oid = i.indexrelid
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema} and c.relname = 'i_2'`;
        expect(index).toEqual({ valid: true });
        expect(await invalidIndexCount(sql, schema)).toBe(0);
      },
    );
  },
);
