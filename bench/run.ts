import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { runFloodsGroup } from "./src/floods.js";
import { runHttpGroup } from "./src/http.js";
import { runInboxGroup } from "./src/inbox.js";
import { runMigratorGroup } from "./src/migrator.js";
import {
  describeMachine,
  describeSource,
  mergeGroups,
  printGroup,
  ROOT,
  readReport,
  writeReport,
} from "./src/report.js";
import type { GroupResult } from "./src/types.js";
import { runVerifyGroup } from "./src/verify.js";
import { runWebhookGroup } from "./src/webhook.js";

/**
 * `pnpm bench` entry: runs every group in turn, prints its tables, then writes bench/results.json, the charts and
 * BENCHMARKS.md. Flags: --quick (smoke run, tiny durations, figures meaningless; its report goes to a scratch
 * directory), --only=verify,http,...,
 * --no-write (print only; for profiling runs, which must not replace the published report),
 * --merge (with --only: keep the other groups of bench/results.json and replace only the groups run, each marked
 * with the date, commit and load of its own run),
 * --render (measure nothing: rebuild BENCHMARKS.md and the charts from bench/results.json, e.g. after editing
 * bench/notes/profiles.md).
 * Exits 0 when a target is missed: a miss is a finding, reported, not a failure.
 */
const GROUPS: Record<string, (options: { quick: boolean }) => Promise<GroupResult>> = {
  verify: runVerifyGroup,
  http: runHttpGroup,
  migrator: runMigratorGroup,
  webhook: runWebhookGroup,
  inbox: runInboxGroup,
  floods: runFloodsGroup,
};

const args = process.argv.slice(2);
if (args.includes("--render")) {
  writeReport(readReport());
  console.log("rebuilt BENCHMARKS.md and bench/charts/*.svg from bench/results.json");
  process.exit(0);
}
const quick = args.includes("--quick");
const only = args
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const source = describeSource(); // before the run: what the build at its start compiled
const started = performance.now();
const loadAtStart = loadavg()[0] ?? 0;
const groups: GroupResult[] = [];
for (const [name, run] of Object.entries(GROUPS)) {
  if (only && !only.includes(name)) continue;
  const groupStarted = performance.now();
  const group = {
    ...(await run({ quick })),
    seconds: Math.round((performance.now() - groupStarted) / 100) / 10,
  };
  printGroup(group);
  groups.push(group);
}
const loadAverage = { start: loadAtStart, end: loadavg()[0] ?? 0 };
const date = new Date().toISOString();
const merge = args.includes("--merge") && only !== undefined && !quick;
const thisRun = {
  date,
  quick,
  durationSeconds: (performance.now() - started) / 1000,
  machine: describeMachine(),
  source,
  loadAverage,
  groups,
};
// Merged: the published run keeps its header; the groups run now replace theirs, each marked with this run.
const published = merge ? readReport() : undefined;
const report =
  published === undefined
    ? thisRun
    : {
        ...published,
        groups: mergeGroups(published, groups, {
          date,
          commit: source.commit,
          loadAverage,
          groups: groups.map((group) => group.id),
        }),
      };
if (!args.includes("--no-write")) {
  // A smoke run's figures mean nothing: its report goes to a scratch directory, never over the published one.
  const root = quick ? mkdtempSync(join(tmpdir(), "agent-platform-bench-quick-")) : ROOT;
  writeReport(report, root);
  console.log(
    `\nwrote ${root}/{BENCHMARKS.md,bench/results.json,bench/charts/*.svg} in ${Math.round((performance.now() - started) / 1000)} s`,
  );
}
