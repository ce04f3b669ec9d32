import {
  createTestDatabase as create,
  TEST_DATABASE_URL,
  type TestDatabase,
} from "@agent-platform/test-support/database";

export { TEST_DATABASE_URL };
export type Backend = "pglite" | "postgres";

/** Embedded PGlite always; real PostgreSQL too when TEST_DATABASE_URL is set. */
export const BACKENDS: Backend[] = TEST_DATABASE_URL === undefined ? ["pglite"] : ["pglite", "postgres"];
if (TEST_DATABASE_URL === undefined) {
  console.warn("TEST_DATABASE_URL is not set: the server tests on real PostgreSQL are skipped");
}

/** A fresh database on TEST_DATABASE_URL's server, dropped by `drop()`. */
export function createTestDatabase(): Promise<TestDatabase> {
  return create("server_test");
}
