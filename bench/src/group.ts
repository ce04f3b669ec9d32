import type { GroupResult } from "./types.js";

const NO_DATABASE = "TEST_DATABASE_URL is not set (a real PostgreSQL is needed)";

/**
 * The start of a group that measures on the real PostgreSQL of TEST_DATABASE_URL: its result with nothing
 * measured yet (`base`), `skip(why)` for the whole result of a group that cannot run, and the database's URL.
 * Without one, `url` is undefined and `skipped` is the group's result already.
 */
export function databaseGroup(
  id: string,
  title: string,
): {
  base: Omit<GroupResult, "figures">;
  skip(why: string): GroupResult;
  url: string | undefined;
  skipped: GroupResult;
} {
  const base = { id, title, method: [], tables: [], charts: [], targets: [] };
  const skip = (why: string): GroupResult => ({ ...base, skipped: why, figures: {} });
  return { base, skip, url: process.env.TEST_DATABASE_URL, skipped: skip(NO_DATABASE) };
}
