#!/usr/bin/env node
// `pnpm start` at the repository root. Fast and quiet on a second start: the packages are rebuilt only
// when their sources are newer than their build (the build's output is shown only if it fails), and the
// server runs from its TypeScript sources through tsx, in this process.
//
// In this process, so Ctrl-C reaches exactly one Node process whose own handler (src/main.ts) shuts down
// and exits 0; pnpm then sees a clean exit instead of a child killed by SIGINT.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const serverDir = dirname(dirname(fileURLToPath(import.meta.url)));
const root = dirname(dirname(serverDir));
const PACKAGES = ["packages/jwt-rbac", "packages/migrator"];
// What a build reads besides `src/`.
const BUILD_INPUTS = ["package.json", "tsup.config.ts", "tsconfig.json", "tsconfig.build.json"];

/** Newest (or oldest) modification time under a path; undefined when it does not exist. */
function mtime(path, pick) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let found;
  for (const entry of readdirSync(path)) {
    const time = mtime(join(path, entry), pick);
    if (time !== undefined) found = found === undefined ? time : pick(found, time);
  }
  return found;
}

function isStale(dir) {
  // The newest output: a build rewrites its files together, and older leftovers must not count.
  const built = mtime(join(dir, "dist"), Math.max);
  if (built === undefined) return true;
  const inputs = [join(dir, "src"), ...BUILD_INPUTS.map((file) => join(dir, file))];
  return inputs.some((input) => (mtime(input, Math.max) ?? 0) > built);
}

const stale = PACKAGES.filter((dir) => isStale(join(root, dir)));
if (stale.length > 0) {
  process.stderr.write(`Building ${stale.join(", ")} (sources changed since the last build)…\n`);
  const filters = stale.flatMap((dir) => ["--filter", `./${dir}`]);
  const build = spawnSync("pnpm", [...filters, "build"], { cwd: root, encoding: "utf8" });
  if (build.status !== 0) {
    process.stderr.write(
      `${build.stdout ?? ""}${build.stderr ?? ""}\nThe build failed; the server did not start.\n`,
    );
    process.exit(1);
  }
}

// Relative paths (PLATFORM_DATA_DIR, ./.data) mean the same as they always did under `pnpm start`.
process.chdir(serverDir);
const { register } = await import("tsx/esm/api");
register();
await import("../src/main.ts");
