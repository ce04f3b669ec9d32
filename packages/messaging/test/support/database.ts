import { createTestDatabase, TEST_DATABASE_URL } from "@agent-platform/test-support/database";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import postgres from "postgres";

export { TEST_DATABASE_URL };

if (TEST_DATABASE_URL === undefined) {
  console.warn("TEST_DATABASE_URL is not set: the messaging tests on real PostgreSQL are skipped");
}

/** A database for one store test: its URL, and drop() to remove what the test made. */
export interface TestDatabase {
  kind: "postgres" | "pglite";
  url: string;
  drop(): Promise<void>;
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
async function freshPglite(): Promise<TestDatabase> {
  const url = await pgliteUrl();
  const reset = async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`DROP SCHEMA IF EXISTS messaging CASCADE`;
    await sql.end();
  };
  await reset();
  return { kind: "pglite", url, drop: reset };
}

/** A fresh database on the real PostgreSQL of TEST_DATABASE_URL, dropped by drop(). */
export async function freshPostgres(): Promise<TestDatabase> {
  return { kind: "postgres", ...(await createTestDatabase("messaging_test")) };
}

/** The databases the store tests run on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const DATABASES: { name: string; fresh: () => Promise<TestDatabase> }[] = [
  { name: "PGlite", fresh: freshPglite },
  ...(TEST_DATABASE_URL ? [{ name: "PostgreSQL", fresh: freshPostgres }] : []),
];

/** postgres.js options that suit the database kind. */
export function connect(database: TestDatabase): postgres.Sql {
  return postgres(database.url, { max: database.kind === "pglite" ? 1 : 5, onnotice: () => {} });
}
