import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_DATABASE_URL } from "./databases.js";
import { startMain } from "./main-process.js";

/** Polls `check` every 20 ms until it is true, failing after `ms`. */
async function waitUntil(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(TEST_DATABASE_URL === undefined)("SIGTERM during POST /databases/{db_id}/migrate", () => {
  const name = `mig_shutdown_${randomBytes(5).toString("hex")}`;
  let admin: postgres.Sql;
  let sql: postgres.Sql;
  let url: string;
  let dataDir: string;
  beforeAll(async () => {
    admin = postgres(TEST_DATABASE_URL as string, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    const parsed = new URL(TEST_DATABASE_URL as string);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
    sql = postgres(url, { max: 3, onnotice: () => {} });
    dataDir = await mkdtemp(join(tmpdir(), "server-migrate-shutdown-"));
  });
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await admin?.unsafe(`drop database if exists ${name} with (force)`);
    await admin?.end({ timeout: 5 });
    await rm(dataDir, { recursive: true, force: true });
  });

  it("cancels the migration at the shutdown deadline: the table and the migration lock are free when the process is gone", async () => {
    const server = startMain({
      DATABASE_URL: url,
      PLATFORM_DATA_DIR: dataDir,
      PORT: "0",
      SHUTDOWN_TIMEOUT_MS: "300",
    });
    try {
      const [, base = ""] = await server.waitForStderr(/'(http:\/\/[^']+)\/databases\/default\/migrate'/);
      const [, token = ""] = await server.waitForStderr(/^ {2}(eyJ[\w.-]+)$/m);
      const migrate = (target?: string) =>
        fetch(`${base}/databases/default/migrate${target ? `?target_version=${target}` : ""}`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
        }).catch((error: unknown) => error);
      expect(await ((await migrate("2.5.0")) as Response).json()).toMatchObject({ to_version: "2.5.0" });

      // 2.5.6 alters `knowledge`: another session holds it, so the migration waits for its lock.
      const holder = await sql.reserve();
      await holder`begin`;
      await holder`lock table knowledge in access share mode`;
      try {
        const inFlight = migrate();
        await waitUntil("the migration waits for the knowledge table", async () => {
          const [row] = await sql<{ n: number }[]>`
            select count(*)::int as n from pg_catalog.pg_stat_activity
            where datname = ${name} and wait_event_type = 'Lock' and query ilike '%knowledge%'`;
          return row?.n === 1;
        });
        const signalled = performance.now();
        server.process.kill("SIGTERM");
        expect(await server.exited).toBe(0);
        // SHUTDOWN_TIMEOUT_MS, then the cancel and the rollback: the README's bound is the timeout + 2 s.
        expect(performance.now() - signalled).toBeLessThan(300 + 2_000);
        await inFlight;
        // Nothing of the server is left waiting on the table, and nobody holds the migration lock.
        const [left] = await sql<{ waiting: number; advisory: number }[]>`
          select
            (select count(*)::int from pg_catalog.pg_stat_activity
             where datname = ${name} and wait_event_type = 'Lock') as waiting,
            (select count(*)::int from pg_catalog.pg_locks l join pg_catalog.pg_database d on d.oid = l.database
             where d.datname = ${name} and l.locktype = 'advisory') as advisory`;
        expect(left).toEqual({ waiting: 0, advisory: 0 });
      } finally {
        await holder`rollback`;
        holder.release();
      }
      const history = await sql<
        { version: string }[]
      >`select version from schema_migrations order by version`;
      expect(history.map((r) => r.version)).toEqual(["2.0.0", "2.3.0", "2.5.0"]);
      const [column] = await sql<{ n: number }[]>`
        select count(*)::int as n from information_schema.columns
        where table_name = 'knowledge' and column_name = 'content_hash'`;
      expect(column?.n).toBe(0);
    } finally {
      if (server.process.exitCode === null) server.process.kill("SIGKILL");
      await server.exited;
    }
  }, 60_000);
});
