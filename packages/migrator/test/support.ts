import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import postgres from "postgres";
import { afterAll, afterEach, beforeAll, inject } from "vitest";
import type { Migration } from "../src/types.js";

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
if (!TEST_DATABASE_URL) {
  console.warn(
    "TEST_DATABASE_URL is not set: the real-PostgreSQL variants of the migrator tests are skipped",
  );
}

export interface Backend {
  readonly kind: "pglite" | "postgres";
  /** A client shared by the file (pool of one on PGlite). */
  readonly sql: postgres.Sql;
  /** Connection string for more clients or child processes. */
  readonly url: string;
}

/**
 * The databases a file runs on: one embedded PGlite for the whole file, plus real PostgreSQL when
 * TEST_DATABASE_URL is set. Use inside `describe.each(backends())` with `backend.current()`.
 */
export function backends(): { kind: Backend["kind"]; current: () => Backend }[] {
  const kinds: Backend["kind"][] = TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];
  return kinds.map((kind) => ({ kind, current: useBackend(kind) }));
}

/** Registers the hooks that start and stop one backend for the enclosing describe block. */
export function useBackend(kind: Backend["kind"]): () => Backend {
  let backend: Backend | undefined;
  let pglite: { db: PGlite; server: PGLiteSocketServer } | undefined;
  let dataDir: string | undefined;
  beforeAll(async () => {
    if (kind === "pglite") {
      dataDir = mkdtempSync(join(tmpdir(), "migrator-test-"));
      cpSync(inject("pgliteTemplate"), dataDir, { recursive: true });
      // Served on loopback (unlike startEmbeddedPostgres, which has no socket) so that child processes
      // (the CLI, a migration killed mid-run) can reach it: two clients, the file's `sql` and one child.
      const db = await PGlite.create(dataDir);
      const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 2 });
      await server.start();
      pglite = { db, server };
      const url = `postgres://postgres@${server.getServerConn()}/postgres`;
      backend = { kind, sql: postgres(url, { max: 1, onnotice: () => {} }), url };
    } else {
      const url = TEST_DATABASE_URL as string;
      backend = { kind, sql: postgres(url, { max: 4, onnotice: () => {} }), url };
    }
  });
  afterAll(async () => {
    await backend?.sql.end({ timeout: 5 });
    await pglite?.server.stop();
    await pglite?.db.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!backend) throw new Error("backend used outside a test");
    return backend;
  };
}

/** A fresh schema name for one test, dropped (with everything in it) after the test. */
export function useFreshSchema(current: () => Backend): () => string {
  let schema: string | undefined;
  const created: string[] = [];
  afterEach(async () => {
    const { sql } = current();
    for (const name of created.splice(0)) await sql`drop schema if exists ${sql(name)} cascade`;
    schema = undefined;
  });
  return () => {
    if (!schema) {
      schema = `mig_${randomBytes(6).toString("hex")}`;
      created.push(schema);
    }
    return schema;
  };
}

/** Tables of `schema`, sorted: what the catalog says, not what the migrator reports. */
export async function tablesIn(sql: postgres.Sql, schema: string): Promise<string[]> {
  const rows = await sql<{ relname: string }[]>`
    select c.relname from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p') order by c.relname`;
  return rows.map((r) => r.relname);
}

export async function historyVersions(sql: postgres.Sql, schema: string, table = "schema_migrations") {
  const rows = await sql<{ version: string }[]>`select version from ${sql(schema)}.${sql(table)}`;
  return rows.map((r) => r.version).sort();
}

/** A migration that creates (and drops on down) table `t_<name>`. */
export function tableMigration(version: string, name: string, extra: Partial<Migration> = {}): Migration {
  return {
    version,
    name,
    up: ({ sql }) => sql`create table ${sql(`t_${name}`)} (id int)`,
    down: ({ sql }) => sql`drop table ${sql(`t_${name}`)}`,
    ...extra,
  };
}
