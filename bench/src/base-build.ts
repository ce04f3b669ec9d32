import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./report.js";

/**
 * The label of the statements that are the instrumentation code path (the tracer checks and spans): every package
 * build drops them when AGENT_PLATFORM_DROP_LABELS names it (esbuild's `dropLabels`, in each tsup.config.ts).
 */
export const INSTRUMENTATION_LABEL = "instrumentation";

/** The files whose presence says a checkout's packages are built (the ones the observability rows load). */
const BUILT = [
  join("packages", "jwt-rbac", "dist", "node", "index.js"),
  join("packages", "jwt-rbac", "dist", "node", "hono.js"),
  join("packages", "messaging", "dist", "index.js"),
];

/** A name only the instrumentation code path holds: present in every normal build, absent from the base. */
const INSTRUMENTATION_MARK = "jwt-rbac authenticate";

function jwtBuildHoldsInstrumentation(dir: string): boolean {
  const dist = join(dir, "packages", "jwt-rbac", "dist", "node");
  return readdirSync(dist)
    .filter((file) => file.endsWith(".js"))
    .some((file) => readFileSync(join(dist, file), "utf8").includes(INSTRUMENTATION_MARK));
}

const git = (args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();

/**
 * The base of the observability rows: this repository's commit (`HEAD`, or `BENCH_UNINSTRUMENTED_COMMIT`) built
 * without its instrumentation code path, i.e. "the same run without the instrumentation code path". A `git worktree`
 * of the commit under the temp directory, installed from the pnpm store (offline) and built with the
 * `instrumentation:` statements dropped, the first time, reused after; `BENCH_BASE_DIR` names one already built.
 * The build is checked both ways: this checkout must hold the instrumentation and the base must not.
 */
export function uninstrumentedCheckout(log: (line: string) => void): { dir: string; commit: string } {
  const given = process.env.BENCH_BASE_DIR;
  const commit = git(["rev-parse", process.env.BENCH_UNINSTRUMENTED_COMMIT ?? "HEAD"]);
  const dirty = git(["status", "--porcelain", "--", "packages", "examples"]);
  if (dirty !== "" && process.env.BENCH_UNINSTRUMENTED_COMMIT === undefined)
    log(
      `observability: WARNING: packages/ or examples/ differ from ${commit.slice(0, 12)}; the base is the commit`,
    );
  const dir = given ?? join(tmpdir(), `agent-platform-bench-uninstrumented-${commit.slice(0, 12)}`);
  const built = () => BUILT.every((file) => existsSync(join(dir, file)));
  if (!built()) {
    if (given !== undefined)
      throw new Error(
        `BENCH_BASE_DIR ${given} has no built packages: run pnpm install && AGENT_PLATFORM_DROP_LABELS=${INSTRUMENTATION_LABEL} pnpm build there`,
      );
    const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) =>
      execFileSync(command, args, { cwd, env, stdio: ["ignore", "ignore", "inherit"] });
    if (!existsSync(dir)) {
      log(`observability: building ${commit.slice(0, 12)} without its instrumentation into ${dir}`);
      run("git", ["worktree", "add", "--detach", dir, commit], ROOT);
    }
    run("pnpm", ["install", "--frozen-lockfile", "--offline"], dir);
    run("pnpm", ["build"], dir, { ...process.env, AGENT_PLATFORM_DROP_LABELS: INSTRUMENTATION_LABEL });
    if (!built()) throw new Error(`the build of ${commit} in ${dir} produced no packages`);
  }
  if (jwtBuildHoldsInstrumentation(dir))
    throw new Error(`${dir} holds the instrumentation code path: it was built without dropping the labels`);
  if (!jwtBuildHoldsInstrumentation(ROOT))
    throw new Error(`${ROOT} holds no instrumentation code path: rebuild it with pnpm build`);
  return { dir, commit };
}
