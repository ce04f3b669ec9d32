import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { lockHolder } from "../src/lock.js";
import { createMigrator } from "../src/migrator.js";
import type { Migration } from "../src/types.js";
import { requireBuiltCli } from "./cli-process.js";
import { segmentMigrations } from "./fixtures/segment-migrations.js";
import { historyVersions, TEST_DATABASE_URL, tablesIn, useBackend, useFreshSchema } from "./support.js";

const child = fileURLToPath(new URL("./fixtures/segment-child.ts", import.meta.url));
const bin = fileURLToPath(new URL("../bin/platform-migrate.js", import.meta.url));
const base = segmentMigrations[0] as Migration;

/** Polls `check` every 20 ms until it is true, failing after `ms`. */
async function waitUntil(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Child {
  readonly proc: ChildProcess;
  /** Resolves with the first JSON line whose `event` is `event`. */
  next(event: string): Promise<Record<string, unknown>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function watch(proc: ChildProcess): Child {
  const lines: Record<string, unknown>[] = [];
  const waiters: { event: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  let stderr = "";
  let buffered = "";
  proc.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  proc.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const text = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      try {
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        for (const waiter of waiters.filter((w) => w.event === line.event)) waiter.resolve(line);
      } catch {
        // Not one of the child's event lines.
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    exited,
    next: (event) =>
      new Promise((resolve, reject) => {
        const seen = lines.find((line) => line.event === event);
        if (seen) return resolve(seen);
        waiters.push({ event, resolve });
        void exited.then(() =>
          setTimeout(() => reject(new Error(`child exited before "${event}": ${stderr}`)), 50),
        );
      }),
  };
}

function startChild(url: string, schema: string, options: object, env: Record<string, string> = {}) {
  return watch(
    spawn(process.execPath, ["--import", "tsx", child, url, schema, JSON.stringify(options)], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    }),
  );
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

/** Sessions of `application_name`, and how many of them are waiting on a lock or running pg_sleep. */
async function sessions(sql: postgres.Sql, name: string) {
  const [row] = await sql<{ all: number; waiting: number; sleeping: number }[]>`
    select count(*)::int as all,
      count(*) filter (where wait_event_type = 'Lock')::int as waiting,
      count(*) filter (where state = 'active' and query like '%pg_sleep%')::int as sleeping
    from pg_catalog.pg_stat_activity where application_name = ${name}`;
  return row as { all: number; waiting: number; sleeping: number };
}

/** Whether `table` can be locked exclusively at once: no session holds any lock on it. */
async function tableIsFree(sql: postgres.Sql, table: string): Promise<boolean> {
  const probe = await sql.reserve();
  try {
    await probe`begin`;
    await probe.unsafe(`lock table ${table} in access exclusive mode nowait`);
    return true;
  } catch {
    return false;
  } finally {
    await probe`rollback`.catch(() => {});
    probe.release();
  }
}

/** The catalog matches the history: each applied version's objects exist, none of a pending one's. */
async function expectHistoryMatchesSchema(sql: postgres.Sql, schema: string) {
  const history = await historyVersions(sql, schema);
  const tables = await tablesIn(sql, schema);
  const [column] = await sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.columns
    where table_schema = ${schema} and table_name = 't_users' and column_name = 'email'`;
  expect(tables.includes("t_users")).toBe(history.includes("1.0.0"));
  expect(tables.includes("t_sessions")).toBe(history.includes("1.1.0"));
  expect(column?.n === 1).toBe(history.includes("1.2.0"));
}

describe.skipIf(!TEST_DATABASE_URL)(
  "migrating processes killed, signalled and racing (real PostgreSQL)",
  () => {
    const current = useBackend("postgres");
    const freshSchema = useFreshSchema(current);

    it("SIGKILL during a segment waiting on a lock: nothing of it stays, and a fresh run completes", async () => {
      const { sql, url } = current();
      const schema = freshSchema();
      const name = `segment-child-${schema}`;
      await createMigrator({ sql, schema, migrations: [base] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      try {
        const run = startChild(url, schema, { ddlLockTimeoutMs: 0, retry: false });
        await waitUntil(
          "the child waits for the table lock",
          async () => (await sessions(sql, name)).waiting === 1,
        );
        run.proc.kill("SIGKILL");
        expect((await run.exited).signal).toBe("SIGKILL");
      } finally {
        // The orphaned backend gets the lock, finds its client gone at its next read, and rolls back.
        await lock.release();
      }
      await waitUntil(
        "the killed child's sessions are gone",
        async () => (await sessions(sql, name)).all === 0,
      );
      expect(await lockHolder(sql, { schema, table: "schema_migrations" })).toBeNull();
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      await expectHistoryMatchesSchema(sql, schema);

      const next = await createMigrator({
        sql,
        schema,
        migrations: segmentMigrations,
        lockTimeoutMs: 1_000,
      }).migrate();
      expect(next.applied).toEqual(["1.1.0", "1.2.0"]);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
      await expectHistoryMatchesSchema(sql, schema);
    });

    it("two processes migrating at once while a third session holds the table: one applies, the other finds it done", async () => {
      const { sql, url } = current();
      const schema = freshSchema();
      await createMigrator({ sql, schema, migrations: [base] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      const options = { ddlLockTimeoutMs: 100, retry: { attempts: 40, baseMs: 50, maxMs: 100 } };
      const runs = [startChild(url, schema, options), startChild(url, schema, options)];
      try {
        await Promise.race(runs.map((r) => r.next("retry")));
        await new Promise((resolve) => setTimeout(resolve, 300));
      } finally {
        await lock.release();
      }
      const done = await Promise.all(runs.map((r) => r.next("done")));
      await Promise.all(runs.map((r) => r.exited));
      const results = done.map(
        (line) => line.result as { applied: string[]; segments: { attempts: { outcome: string }[] }[] },
      );
      expect(done.map((line) => line.error)).toEqual([undefined, undefined]);
      const applied = results.filter((r) => r.applied.length > 0);
      expect(applied).toHaveLength(1);
      expect(applied[0]?.applied).toEqual(["1.1.0", "1.2.0"]);
      const outcomes = applied[0]?.segments[0]?.attempts.map((a) => a.outcome) ?? [];
      expect(outcomes[0]).toBe("lock_timeout");
      expect(outcomes[outcomes.length - 1]).toBe("committed");
      expect(results.filter((r) => r.applied.length === 0)).toHaveLength(1);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
      await expectHistoryMatchesSchema(sql, schema);
    });

    it("SIGTERM during a statement holding the table: cancelled, rolled back, table and lock free when the process is gone", async () => {
      const { sql, url } = current();
      const schema = freshSchema();
      const name = `segment-child-${schema}`;
      await createMigrator({ sql, schema, migrations: [base] }).migrate();
      const run = startChild(url, schema, { retry: false }, { SEGMENT_SLOW: "1" });
      await waitUntil(
        "the child sleeps holding t_users",
        async () => (await sessions(sql, name)).sleeping === 1,
      );
      expect(await tableIsFree(sql, `${schema}.t_users`)).toBe(false);
      const signalled = performance.now();
      run.proc.kill("SIGTERM");
      const done = await run.next("done");
      expect((await run.exited).code).toBe(0);
      const elapsedMs = performance.now() - signalled;
      // The README's bound: the table is free within 2 s of the signal (measured: well under 1 s).
      expect(elapsedMs).toBeLessThan(2_000);
      expect(done.error).toMatchObject({ code: "MIGRATION_ABORTED" });
      expect(await sessions(sql, name)).toMatchObject({ sleeping: 0 });
      expect(await tableIsFree(sql, `${schema}.t_users`)).toBe(true);
      expect(await lockHolder(sql, { schema, table: "schema_migrations" })).toBeNull();
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      await expectHistoryMatchesSchema(sql, schema);
    });

    it("SIGTERM while the run waits to read a history table another session has locked", async () => {
      const { sql, url } = current();
      const schema = freshSchema();
      const name = `segment-child-${schema}`;
      await createMigrator({ sql, schema, migrations: [base] }).migrate();
      const holder = await sql.reserve();
      await holder`begin`;
      await holder.unsafe(`lock table ${schema}.schema_migrations in access exclusive mode`);
      try {
        const run = startChild(url, schema, { retry: false });
        await waitUntil(
          "the child waits to read the history",
          async () => (await sessions(sql, name)).waiting === 1,
        );
        const signalled = performance.now();
        run.proc.kill("SIGTERM");
        const done = await run.next("done");
        await run.exited;
        expect(performance.now() - signalled).toBeLessThan(2_000);
        expect(done.error).toMatchObject({ code: "MIGRATION_ABORTED" });
        expect((done.error as { message: string }).message).toContain("before any migration ran");
        expect(await sessions(sql, name)).toMatchObject({ waiting: 0 });
        expect(await lockHolder(sql, { schema, table: "schema_migrations" })).toBeNull();
      } finally {
        await holder`rollback`;
        holder.release();
      }
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
    });

    it("SIGTERM during a retry's wait ends the wait at once and releases the lock", async () => {
      const { sql, url } = current();
      const schema = freshSchema();
      await createMigrator({ sql, schema, migrations: [base] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      try {
        const run = startChild(url, schema, {
          ddlLockTimeoutMs: 100,
          retry: { attempts: 3, baseMs: 60_000, maxMs: 60_000 },
        });
        await run.next("retry");
        const signalled = performance.now();
        run.proc.kill("SIGTERM");
        const done = await run.next("done");
        await run.exited;
        expect(performance.now() - signalled).toBeLessThan(2_000);
        expect(done.error).toMatchObject({ code: "MIGRATION_ABORTED" });
        expect(await lockHolder(sql, { schema, table: "schema_migrations" })).toBeNull();
        expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      } finally {
        await lock.release();
      }
    });
  },
);

describe.skipIf(!TEST_DATABASE_URL)("Ctrl-C of platform-migrate up (real PostgreSQL)", () => {
  requireBuiltCli();
  const current = useBackend("postgres");
  const freshSchema = useFreshSchema(current);
  const dir = mkdtempSync(join(tmpdir(), "migrate-sigint-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("cancels the running statement, rolls back, releases the lock and exits 130", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    writeFileSync(join(dir, "1.0.0_users.up.sql"), "create table users (id int);\n");
    writeFileSync(
      join(dir, "1.1.0_slow.up.sql"),
      "alter table users add column email text;\nselect pg_sleep(30);\n",
    );
    const common = ["--dir", dir, "--schema", schema, "--database-url", url];
    const first = watch(spawn(process.execPath, [bin, "up", "--to", "1.0.0", ...common], { stdio: "pipe" }));
    expect((await first.exited).code).toBe(0);
    const run = watch(spawn(process.execPath, [bin, "up", ...common], { stdio: "pipe" }));
    let stderr = "";
    run.proc.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    await waitUntil("the CLI's statement sleeps holding users", async () => {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_catalog.pg_stat_activity
        where state = 'active' and query like '%pg_sleep(30)%' and query not like '%pg_stat_activity%'`;
      return row?.n === 1 && !(await tableIsFree(sql, `${schema}.users`));
    });
    const signalled = performance.now();
    run.proc.kill("SIGINT");
    expect((await run.exited).code).toBe(130);
    expect(performance.now() - signalled).toBeLessThan(2_000);
    expect(stderr).toContain("SIGINT");
    expect(stderr).toContain("The migration run was stopped at migration 1.1.0 (slow)");
    expect(await tableIsFree(sql, `${schema}.users`)).toBe(true);
    expect(await lockHolder(sql, { schema, table: "schema_migrations" })).toBeNull();
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
  });
});
