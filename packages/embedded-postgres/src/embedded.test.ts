import { execFile, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createMigrator, type Migration, MigrationFailedError } from "@agent-platform/migrator";
import { afterAll, describe, expect, inject, it } from "vitest";
import { DataDirLockedError, startEmbeddedPostgres } from "./embedded.js";

const child = fileURLToPath(new URL("../test/fixtures/embedded-child.ts", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "migrator-embedded-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const LOCK_DIR = "agent-platform-embedded.lock";

/** The record of the lock's highest generation (see data-dir-lock.ts). */
function lockRecord(dataDir: string): unknown {
  const dir = join(dataDir, LOCK_DIR);
  const highest = Math.max(
    ...readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .map(Number),
  );
  return JSON.parse(readFileSync(join(dir, String(highest)), "utf8"));
}

/** A data directory that already went through initdb (copied from the suite's template), to save time. */
function initialisedDataDir(name: string): string {
  const dataDir = join(root, name);
  cpSync(inject("pgliteTemplate"), dataDir, { recursive: true });
  return dataDir;
}

describe("startEmbeddedPostgres", () => {
  it("initialises a new data directory, persists to it across restarts and serves postgres.js in process", async () => {
    const dataDir = join(root, "persist", "nested");
    const first = await startEmbeddedPostgres({ dataDir });
    await first.sql`create table kept (note text)`;
    await first.sql`insert into kept values ('still here')`;
    await first.stop();
    await first.stop(); // idempotent
    expect(lockRecord(dataDir)).toEqual({ free: true });

    const second = await startEmbeddedPostgres({ dataDir });
    try {
      expect(await second.sql`select note from kept`).toEqual([{ note: "still here" }]);
    } finally {
      await second.stop();
    }
    // initdb alone takes seconds, and far more on a loaded machine.
  }, 120_000);

  it("runs the migrator through the in-process client: transactions commit, a failure rolls back", async () => {
    const embedded = await startEmbeddedPostgres({ dataDir: initialisedDataDir("migrate") });
    try {
      const { sql } = embedded;
      const good: Migration = { version: "1.0.0", name: "a", up: ({ sql }) => sql`create table a (id int)` };
      const bad: Migration = {
        version: "1.1.0",
        name: "b",
        up: async ({ sql }) => {
          await sql`create table b (id int)`;
          await sql`select 1 / 0`;
        },
      };
      await createMigrator({ sql, migrations: [good] }).migrate();
      await expect(createMigrator({ sql, migrations: [good, bad] }).migrate()).rejects.toBeInstanceOf(
        MigrationFailedError,
      );
      const tables = await sql`select relname from pg_class where relname in ('a', 'b') order by 1`;
      expect(tables.map((r) => r.relname)).toEqual(["a"]);
      // The failed run left no transaction open on PGlite's single session.
      await sql`create table c (id int)`;
      await sql.reserve().then(async (reserved) => {
        await reserved`insert into c values (1)`;
        reserved.release();
      });
      expect(await sql`select count(*)::int as n from c`).toEqual([{ n: 1 }]);
    } finally {
      await embedded.stop();
    }
  });

  it("refuses a data directory another process or this one has open, with a clear message", async () => {
    const dataDir = initialisedDataDir("locked");
    const running = await startEmbeddedPostgres({ dataDir });
    try {
      const again = startEmbeddedPostgres({ dataDir });
      await expect(again).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toMatchObject({
        code: "DATA_DIR_LOCKED",
        pid: process.pid,
        message: expect.stringContaining("(this process)"),
      });

      const result = await promisify(execFile)(process.execPath, ["--import", "tsx", child, dataDir]).catch(
        (error: { code: number; stdout: string }) => error,
      );
      expect(result).toMatchObject({ code: 1 });
      expect(result.stdout).toContain(`DATA_DIR_LOCKED: The embedded PostgreSQL data directory ${dataDir}`);
      expect(result.stdout).toContain(`already in use by process ${process.pid}`);
      // The refused attempts did not disturb the running database.
      expect(await running.sql`select 1 as one`).toEqual([{ one: 1 }]);
    } finally {
      await running.stop();
    }
  });

  it("takes over a lock left by a process that no longer exists", async () => {
    const dataDir = initialisedDataDir("stale");
    const gone = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid as number;
    mkdirSync(join(dataDir, LOCK_DIR));
    writeFileSync(join(dataDir, LOCK_DIR, "1"), JSON.stringify({ pid: gone, start: "1", boot: null }));

    const embedded = await startEmbeddedPostgres({ dataDir });
    try {
      expect(lockRecord(dataDir)).toMatchObject({ pid: process.pid });
      expect(await embedded.sql`select 1 as one`).toEqual([{ one: 1 }]);
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toMatchObject({ pid: process.pid });
    } finally {
      await embedded.stop();
    }
    expect(lockRecord(dataDir)).toEqual({ free: true });
  });

  it("takes over the lock file of earlier versions, even one naming this process's pid (a restarted container)", async () => {
    const dataDir = initialisedDataDir("same-pid");
    writeFileSync(join(dataDir, LOCK_DIR), String(process.pid));

    const embedded = await startEmbeddedPostgres({ dataDir });
    try {
      expect(lockRecord(dataDir)).toMatchObject({ pid: process.pid });
    } finally {
      await embedded.stop();
    }
    expect(lockRecord(dataDir)).toEqual({ free: true });
  });

  it("refuses a second path to the same data directory (a symlink) in the same process", async () => {
    const dataDir = initialisedDataDir("symlinked");
    const alias = join(root, "symlinked-alias");
    symlinkSync(dataDir, alias);
    const embedded = await startEmbeddedPostgres({ dataDir });
    try {
      await expect(startEmbeddedPostgres({ dataDir: alias })).rejects.toMatchObject({
        code: "DATA_DIR_LOCKED",
        pid: process.pid,
      });
    } finally {
      await embedded.stop();
    }
  });
});

describe("startEmbeddedPostgres's guard", () => {
  it("refuses every statement while it throws, leaves no transaction open, and lets them through again at once", async () => {
    let refusing: Error | undefined;
    const db = await startEmbeddedPostgres({
      dataDir: initialisedDataDir("guarded"),
      guard: () => {
        if (refusing !== undefined) throw refusing;
      },
    });
    try {
      await db.sql`CREATE TABLE kept (n int)`;
      const refusal = Object.assign(new Error("disk nearly full"), { code: "53100" });
      // Refused in the middle of a transaction: its first statement went through, the rest may not.
      const inTransaction = db.sql.begin(async (sql) => {
        await sql`INSERT INTO kept VALUES (1)`;
        refusing = refusal;
        await sql`INSERT INTO kept VALUES (2)`;
      });
      // Each fails with its connection (postgres.js reports the guard's throw as the connection closing).
      await expect(inTransaction).rejects.toThrow();
      for (const statement of [db.sql`SELECT 1`, db.sql`INSERT INTO kept VALUES (3)`]) {
        await expect(statement).rejects.toThrow();
      }
      refusing = undefined;
      const started = performance.now();
      await db.sql`INSERT INTO kept VALUES (4)`;
      expect(performance.now() - started).toBeLessThan(2_000);
      // Nothing of the refused transaction was committed, and nothing refused was written.
      expect(await db.sql`SELECT n FROM kept ORDER BY n`).toEqual([{ n: 4 }]);
    } finally {
      await db.stop();
    }
  });
});
