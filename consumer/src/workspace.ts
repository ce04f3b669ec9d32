import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface PackageJson {
  name: string;
  private?: boolean;
  version: string;
  main?: string;
  module?: string;
  types?: string;
  bin?: string | Record<string, string>;
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export function readPackageJson(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
}

/** Every package a user can install: the non-private workspaces under packages/, found afresh each run. */
export function publicPackageDirs(): string[] {
  const packagesDir = join(repoRoot, "packages");
  return readdirSync(packagesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(packagesDir, entry.name))
    .filter((dir) => {
      try {
        return readPackageJson(dir).private !== true;
      } catch {
        return false; // a folder without a package.json is no package
      }
    });
}

/** The version of `name` installed for the workspace at `dir`, so the consumer gets what the tests ran with. */
export function installedVersion(dir: string, name: string): string {
  return readPackageJson(join(dir, "node_modules", name)).version;
}
