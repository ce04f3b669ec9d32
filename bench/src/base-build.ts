import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./report.js";

/**
 * The commit the observability rows compare against: the last one before metrics, tracing and the decision audit
 * entered the packages (`BENCH_UNINSTRUMENTED_COMMIT` names another, e.g. the parent of the merge that brought them).
 */
export const UNINSTRUMENTED_COMMIT = "6fef8f6bb35e8272dbd5d42dcc2284cf7de119ac";

/** The files whose presence says a checkout's packages are built (the ones the observability rows load). */
const BUILT = [
  join("packages", "jwt-rbac", "dist", "node", "index.js"),
  join("packages", "jwt-rbac", "dist", "node", "hono.js"),
  join("packages", "messaging", "dist", "index.js"),
];

/**
 * A built checkout of `commit`: `BENCH_BASE_DIR` when set (a checkout someone built), else a `git worktree` of the
 * commit under the temp directory, installed from the pnpm store (offline) and built the first time, reused after.
 * A worktree of this repository, so the workspace's packages resolve exactly as they do here.
 */
export function uninstrumentedCheckout(log: (line: string) => void): { dir: string; commit: string } {
  const given = process.env.BENCH_BASE_DIR;
  const commit = process.env.BENCH_UNINSTRUMENTED_COMMIT ?? UNINSTRUMENTED_COMMIT;
  const dir = given ?? join(tmpdir(), `agent-platform-bench-base-${commit.slice(0, 12)}`);
  const built = () => BUILT.every((file) => existsSync(join(dir, file)));
  if (built()) return { dir, commit };
  if (given !== undefined)
    throw new Error(`BENCH_BASE_DIR ${given} has no built packages: run pnpm install && pnpm build there`);
  const run = (command: string, args: string[], cwd: string) =>
    execFileSync(command, args, { cwd, stdio: ["ignore", "ignore", "inherit"] });
  if (!existsSync(dir)) {
    log(`observability: building the uninstrumented commit ${commit.slice(0, 12)} into ${dir}`);
    run("git", ["worktree", "add", "--detach", dir, commit], ROOT);
  }
  run("pnpm", ["install", "--frozen-lockfile", "--offline"], dir);
  run("pnpm", ["build"], dir);
  if (!built()) throw new Error(`the build of ${commit} in ${dir} produced no packages`);
  return { dir, commit };
}
