import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { configError } from "@agent-platform/common/internal";
import type { Migration } from "./types.js";

const FILE = /^([^_]+)_(.+)\.(up|down)\.sql$/;
const NO_TRANSACTION = /^--\s*platform-migrate:\s*no-transaction\s*$/m;

/**
 * Loads `<version>_<name>.up.sql` / `<version>_<name>.down.sql` pairs from `dir` (a down file is optional).
 * Each file runs as one simple-protocol query, so it may hold several statements. An up file with the
 * line `-- platform-migrate: no-transaction` runs outside a transaction (both directions).
 */
export function sqlMigrations(dir: string): Migration[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((file) => file.endsWith(".sql"));
  } catch (error) {
    throw configError(
      "migrator",
      `Cannot read the migrations directory ${dir}: ${(error as Error).message}`,
      "dir",
    );
  }
  const pairs = new Map<string, { version: string; name: string; up?: string; down?: string }>();
  for (const file of files.sort()) {
    const match = FILE.exec(file);
    if (!match) {
      throw configError(
        "migrator",
        `${join(dir, file)}: expected <version>_<name>.up.sql or <version>_<name>.down.sql`,
        "dir",
      );
    }
    const [, version = "", name = "", direction] = match;
    const key = `${version}_${name}`;
    const pair = pairs.get(key) ?? { version, name };
    pair[direction === "up" ? "up" : "down"] = readFileSync(join(dir, file), "utf8");
    pairs.set(key, pair);
  }
  return [...pairs.entries()].map(([key, { version, name, up, down }]) => {
    if (up === undefined)
      throw configError("migrator", `${join(dir, `${key}.down.sql`)} has no matching up file`, "dir");
    return {
      version,
      name,
      source: up,
      transaction: !NO_TRANSACTION.test(up),
      up: ({ sql }) => sql.unsafe(up),
      ...(down === undefined ? {} : { down: ({ sql }) => sql.unsafe(down) }),
    } satisfies Migration;
  });
}
