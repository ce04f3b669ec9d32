import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configError } from "@agent-platform/common/internal";
import { sqlMigrations } from "./sql-files.js";
import { compareVersions, parseVersion, type Version } from "./version.js";

// A name that reads the same in every shell and file system, bounded so file names stay well under 255 bytes.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
const FIRST_VERSION = "0.1.0";

export interface CreatedMigration {
  readonly version: string;
  readonly up: string;
  readonly down: string;
}

/**
 * Writes `<version>_<name>.up.sql` and `.down.sql` in `dir` (created if missing). The version defaults to
 * the next patch after the highest existing one; a given version must be above every existing one, since
 * a lower one would be refused as out of order wherever the higher one is applied.
 */
export function createMigrationFiles(dir: string, name: string, version?: string): CreatedMigration {
  if (!NAME.test(name)) {
    throw configError(
      "migrator",
      `migration name ${JSON.stringify(name.slice(0, 120))} must be 1-100 letters, digits, _ or -, starting with a letter or digit`,
      "name",
    );
  }
  mkdirSync(dir, { recursive: true });
  const existing = sqlMigrations(dir).map((m) => parseVersion(m.version));
  const highest = existing.sort(compareVersions).at(-1);
  const chosen = version === undefined ? nextPatch(highest) : parseVersion(version);
  if (highest && compareVersions(chosen, highest) <= 0) {
    const same =
      compareVersions(chosen, highest) === 0 || existing.some((v) => compareVersions(v, chosen) === 0);
    throw configError(
      "migrator",
      same
        ? `${dir} already has a migration with version ${chosen.text}`
        : `version ${chosen.text} is below the highest existing version ${highest.text}; it would be refused as out of order`,
      "version",
    );
  }
  const base = join(dir, `${chosen.text}_${name}`);
  const up = `${base}.up.sql`;
  const down = `${base}.down.sql`;
  // `wx`: never overwrite a file, even one created since the directory was read.
  writeFileSync(up, `-- ${chosen.text} ${name}\n`, { flag: "wx" });
  writeFileSync(down, `-- Reverts ${chosen.text} ${name}\n`, { flag: "wx" });
  return { version: chosen.text, up, down };
}

function nextPatch(highest: Version | undefined): Version {
  if (!highest) return parseVersion(FIRST_VERSION);
  const [major, minor, patch] = highest.core;
  // 2.6.0-rc.1 is followed by 2.6.0 itself; 2.5.6 by 2.5.7.
  return parseVersion(`${major}.${minor}.${highest.prerelease.length > 0 ? patch : patch + 1}`);
}
