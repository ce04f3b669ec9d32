import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import postgres from "postgres";

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
if (!TEST_DATABASE_URL) {
  console.warn("TEST_DATABASE_URL is not set: messaging tests on real PostgreSQL are skipped");
}

/** A database for one test: its URL, and drop() to remove it. */
export interface TestDatabase {
  kind: "postgres" | "pglite";
  url: string;
  drop(): Promise<void>;
}

/** A fresh database on the real PostgreSQL of TEST_DATABASE_URL. */
export async function freshPostgres(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) throw new Error("TEST_DATABASE_URL is not set");
  const name = `messaging_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    kind: "postgres",
    url: url.toString(),
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

let sharedPglite: Promise<string> | undefined;

/** One in-memory PGlite per test process, served on a random local port; starting it takes seconds. */
function pgliteUrl(): Promise<string> {
  sharedPglite ??= (async () => {
    const db = await PGlite.create();
    const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 16 });
    await server.start();
    return `postgres://postgres@${server.getServerConn()}/postgres`;
  })();
  return sharedPglite;
}

/**
 * The shared PGlite, emptied of the messaging schema before and after the test (the schema holds both the
 * inbox and its migration history, so each test migrates from scratch). Clients must use a pool of one.
 */
export async function freshPglite(): Promise<TestDatabase> {
  const url = await pgliteUrl();
  const reset = async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`DROP SCHEMA IF EXISTS messaging CASCADE`;
    await sql.end();
  };
  await reset();
  return { kind: "pglite", url, drop: reset };
}

/** The databases every database-backed test runs on: PGlite always, PostgreSQL when configured. */
export const DATABASES: { name: string; fresh: () => Promise<TestDatabase> }[] = [
  { name: "PGlite", fresh: freshPglite },
  ...(TEST_DATABASE_URL ? [{ name: "PostgreSQL", fresh: freshPostgres }] : []),
];

/** postgres.js options that suit the database kind. */
export function connect(database: TestDatabase): postgres.Sql {
  return postgres(database.url, { max: database.kind === "pglite" ? 1 : 5, onnotice: () => {} });
}

/** Message ids in the inbox, read directly from the database. */
export async function inboxIds(database: TestDatabase): Promise<string[]> {
  const sql = connect(database);
  try {
    const rows = await sql<
      { message_id: string }[]
    >`SELECT message_id FROM messaging.inbox ORDER BY message_id`;
    return rows.map((row) => row.message_id);
  } finally {
    await sql.end();
  }
}
