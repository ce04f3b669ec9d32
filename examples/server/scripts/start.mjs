#!/usr/bin/env node
// `pnpm start` at the repository root. Fast and quiet on a second start: the workspace packages the server
// depends on are rebuilt only when their sources are newer than their build, and so is the server's own
// bundle (dist/main.mjs); a build's output is shown only if it fails. The server runs from that bundle rather
// than through tsx: tsx's loader hooks and its esbuild service cost about 1.5 s of CPU on every start, more
// than the rest of the startup but PGlite's boot (`node scripts/measure-start.mjs` measures it).
//
// In this process, so Ctrl-C reaches exactly one Node process whose own handler (src/main.ts) shuts down
// and exits 0; pnpm then sees a clean exit instead of a child killed by SIGINT.
import { spawnSync } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const serverDir = dirname(dirname(fileURLToPath(import.meta.url)));
const root = dirname(dirname(serverDir));
const manifest = JSON.parse(readFileSync(join(serverDir, "package.json"), "utf8"));
// The workspace packages the server runs on, read from its dependencies so a new one cannot be forgotten.
const PACKAGES = Object.entries(manifest.dependencies)
  .filter(([name, range]) => range.startsWith("workspace:") && name.startsWith("@agent-platform/"))
  .map(([name]) => `packages/${name.slice("@agent-platform/".length)}`);
// What a package's build reads besides `src/`.
const BUILD_INPUTS = ["package.json", "tsup.config.ts", "tsconfig.json", "tsconfig.build.json"];
const BUNDLE_DIR = join(serverDir, "dist");
const MIGRATIONS_DIR = join(serverDir, "src", "migrations");

/** Newest modification time under a path; undefined when it does not exist. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let found;
  for (const entry of readdirSync(path)) {
    const time = newest(join(path, entry));
    if (time !== undefined && (found === undefined || time > found)) found = time;
  }
  return found;
}

/** Whether `output` (a build's directory) is missing or older than any of `inputs`. */
function isStale(output, inputs) {
  // The newest output: a build rewrites its files together, and older leftovers must not count.
  const built = newest(output);
  if (built === undefined) return true;
  return inputs.some((input) => (newest(input) ?? 0) > built);
}

function fail(output) {
  process.stderr.write(`${output}\nThe build failed; the server did not start.\n`);
  process.exit(1);
}

const stale = PACKAGES.filter((dir) =>
  isStale(join(root, dir, "dist"), [
    join(root, dir, "src"),
    ...BUILD_INPUTS.map((file) => join(root, dir, file)),
  ]),
);
if (stale.length > 0) {
  process.stderr.write(`Building ${stale.join(", ")} (sources changed since the last build)…\n`);
  const filters = stale.flatMap((dir) => ["--filter", `./${dir}`]);
  const build = spawnSync("pnpm", [...filters, "build"], { cwd: root, encoding: "utf8" });
  if (build.status !== 0) fail(`${build.stdout ?? ""}${build.stderr ?? ""}`);
}

const bundle = join(BUNDLE_DIR, "main.mjs");
if (isStale(BUNDLE_DIR, [join(serverDir, "src"), join(serverDir, "package.json")])) {
  process.stderr.write("Bundling the server (sources changed since the last start)…\n");
  // Loaded only here: a start with unchanged sources does not pay for esbuild.
  const { build } = await import("esbuild");
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  try {
    // The server's own modules in one file; every package (workspace or npm) stays a normal import, so it
    // is the same module instance the packages' own imports get.
    await build({
      entryPoints: [join(serverDir, "src", "main.ts")],
      outfile: bundle,
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "silent",
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  // The platform schema's SQL files sit beside the module that loads them (src/migrations/index.ts reads its
  // own directory), which in the bundle is dist/.
  for (const file of readdirSync(MIGRATIONS_DIR).filter((name) => name.endsWith(".sql"))) {
    copyFileSync(join(MIGRATIONS_DIR, file), join(BUNDLE_DIR, file));
  }
}

// Relative paths (PLATFORM_DATA_DIR, ./.data) mean the same as they always did under `pnpm start`.
process.chdir(serverDir);
await import(pathToFileURL(bundle).href);
