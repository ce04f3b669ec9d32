import postgres from "postgres";

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export type Backend = "pglite" | "postgres";

/** Embedded PGlite always; real PostgreSQL too when TEST_DATABASE_URL is set. */
export const BACKENDS: Backend[] = TEST_DATABASE_URL === undefined ? ["pglite"] : ["pglite", "postgres"];
if (TEST_DATABASE_URL === undefined) {
  console.warn("TEST_DATABASE_URL is not set: the server tests on real PostgreSQL are skipped");
}

export function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 10);
}

/** A fresh database on TEST_DATABASE_URL's server, dropped by `drop()`. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (TEST_DATABASE_URL === undefined) throw new Error("TEST_DATABASE_URL is not set");
  const name = `server_test_${randomSuffix()}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const cleanup = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}
