import { randomBytes } from "node:crypto";
import postgres from "postgres";

/** The real PostgreSQL the tests and the bench may use; unset, what needs it is skipped with a message. */
export const TEST_DATABASE_URL: string | undefined = process.env.TEST_DATABASE_URL;

/** A database of one test or bench group: its URL, and `drop()` to remove it. */
export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database on the server of `serverUrl` (default TEST_DATABASE_URL), named `<prefix>_<pid>_<random>`
 * so parallel runs never share one; `drop()` removes it even with connections still open.
 */
export async function createTestDatabase(
  prefix: string,
  serverUrl: string | undefined = TEST_DATABASE_URL,
): Promise<TestDatabase> {
  if (serverUrl === undefined) throw new Error("TEST_DATABASE_URL is not set");
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(prefix)) throw new Error(`not a database name prefix: ${prefix}`);
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
  await onServer(serverUrl, (sql) => sql.unsafe(`CREATE DATABASE "${name}"`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: () => onServer(serverUrl, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}

async function onServer(
  serverUrl: string,
  statement: (sql: postgres.Sql) => Promise<unknown>,
): Promise<void> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await statement(sql);
  } finally {
    await sql.end();
  }
}
