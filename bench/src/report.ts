import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, hostname, platform, release, totalmem } from "node:os";
import { dirname, join, relative } from "node:path";
import { beforeAfterCommits, beforeAfterSection, readBefore } from "./before-after.js";
import { renderChart } from "./svg.js";
import type { GroupResult, Machine, Table, Target } from "./types.js";

const BENCH_DIR = join(dirname(new URL(import.meta.url).pathname), "..");
/** The repository root: where the published report lives (BENCHMARKS.md, bench/results.json, bench/charts). */
export const ROOT = join(BENCH_DIR, "..");
/** Hand-written notes (profiles of missed targets, the rounds that followed), linked from BENCHMARKS.md. */
const PROFILE_NOTES = "bench/notes/profiles.md";
/** Generated beside BENCHMARKS.md: the commits between the before run and this report's. */
const COMMIT_NOTES = "bench/notes/before-after.md";
/** The instrumentation's cost, measured against a build without it (the observability group's rows, round by round). */
const OBSERVABILITY_NOTES = "bench/notes/observability-cost.md";
/** The inbox's end-to-end rows: ordering, pacing and the claim, what they cost and why. */
const INBOX_NOTES = "bench/notes/inbox-end-to-end.md";

export function describeMachine(): Machine {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? "unknown",
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: `${platform()} ${release()}`,
    node: process.version,
    hostname: hostname(),
  };
}

/** Which code was measured: the commit, and the measured packages' files that differed from it at run time. */
export function describeSource(): { commit: string; uncommitted: string[] } {
  const git = (...args: string[]) => {
    try {
      return execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  };
  const status = git("status", "--porcelain", "--", "packages", "examples/server");
  return {
    commit: git("rev-parse", "--short", "HEAD") || "unknown",
    uncommitted: status ? status.split("\n") : [],
  };
}

export interface RunReport {
  date: string;
  quick: boolean;
  durationSeconds: number;
  machine: Machine;
  source: ReturnType<typeof describeSource>;
  /** 1-minute load average when the run started and ended: the machine is shared, so say how busy it was. */
  loadAverage: { start: number; end: number };
  groups: GroupResult[];
}

export function printGroup(group: GroupResult): void {
  console.log(`\n=== ${group.title} (${group.seconds ?? "?"} s)`);
  if (group.skipped) {
    console.log(`SKIPPED: ${group.skipped}`);
    return;
  }
  for (const table of group.tables) printTable(table);
  for (const target of group.targets)
    console.log(`target ${verdict(target)}: ${target.name} — ${target.measured}`);
}

function printTable(table: Table): void {
  const widths = table.columns.map((c, i) =>
    Math.max(c.length, ...table.rows.map((r) => (r[i] ?? "").length)),
  );
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(`\n${table.title}`);
  console.log(line(table.columns));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of table.rows) console.log(line(row));
  for (const note of table.notes ?? []) console.log(`  note: ${note}`);
}

function verdict(target: Target): string {
  return target.met === null ? "not measured" : target.met ? "met" : "MISSED";
}

/** A Markdown table padded the way the repository's formatter (Biome) lays tables out, so `pnpm lint` stays green. */
function markdownTable(table: Table): string {
  const esc = (text: string) => text.replace(/\|/g, "\\|");
  const rows = [table.columns, ...table.rows].map((row) => row.map(esc));
  const width = (text: string) => [...text].length;
  const widths = table.columns.map((_, i) => Math.max(3, ...rows.map((row) => width(row[i] ?? ""))));
  const line = (cells: string[]) =>
    `| ${widths.map((w, i) => (cells[i] ?? "") + " ".repeat(w - width(cells[i] ?? ""))).join(" | ")} |`;
  const [head = [], ...body] = rows;
  return [
    `**${table.title}**`,
    "",
    line(head),
    `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`,
    ...body.map(line),
    "",
    ...(table.notes ?? []).map((n) => `- ${n}`),
    "",
  ].join("\n");
}

/**
 * The published report's groups with `fresh` ones put in place of (or after) those of the same id, each marked
 * with its own run, so running one group does not wipe the others' published rows.
 */
export function mergeGroups(
  published: RunReport,
  fresh: GroupResult[],
  run: NonNullable<GroupResult["measuredSeparately"]>,
): GroupResult[] {
  const marked = new Map(fresh.map((group) => [group.id, { ...group, measuredSeparately: run }]));
  const merged = published.groups.map((group) => marked.get(group.id) ?? group);
  for (const group of marked.values())
    if (!published.groups.some((g) => g.id === group.id)) merged.push(group);
  return merged;
}

export function readReport(): RunReport {
  return JSON.parse(readFileSync(join(BENCH_DIR, "results.json"), "utf8")) as RunReport;
}

/**
 * Writes bench/results.json, one SVG per chart under bench/charts/, and regenerates BENCHMARKS.md, under `root`
 * (the repository, or a scratch directory for a smoke run that must not replace the published report).
 */
export function writeReport(report: RunReport, root = ROOT): void {
  const chartsDir = join(root, "bench", "charts");
  mkdirSync(chartsDir, { recursive: true });
  writeFileSync(join(root, "bench", "results.json"), `${JSON.stringify(report, null, 2)}\n`);
  const chartFiles = new Map<string, string[]>();
  for (const group of report.groups) {
    const files = group.charts.map((chart, i) => {
      const file = join(chartsDir, `${group.id}${group.charts.length > 1 ? `-${i + 1}` : ""}.svg`);
      writeFileSync(file, renderChart(chart));
      return relative(root, file);
    });
    chartFiles.set(group.id, files);
  }
  writeFileSync(join(root, "BENCHMARKS.md"), renderMarkdown(report, chartFiles, root));
  const before = readBefore(root);
  if (before !== undefined) {
    mkdirSync(join(root, dirname(COMMIT_NOTES)), { recursive: true });
    writeFileSync(join(root, COMMIT_NOTES), beforeAfterCommits(root, before, report));
  }
}

function renderMarkdown(report: RunReport, chartFiles: Map<string, string[]>, root: string): string {
  const m = report.machine;
  const targets = report.groups.flatMap((g) => g.targets);
  const out: string[] = [
    "# Benchmarks",
    "",
    "How fast jwt-rbac, the migrator and the reference server's messaging path are, each measured side by side with " +
      "the alternatives a user would otherwise pick, on one machine in one run. Generated by `pnpm bench` " +
      "(`bench/run.ts`); do not edit by hand — every figure comes from one run, recorded in " +
      "[`bench/results.json`](bench/results.json).",
    "",
    "## Machine and run",
    "",
    `Produced on **${m.cpuModel}**, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}, ` +
      `on ${report.date} (${report.quick ? "QUICK smoke run — figures are not meaningful" : "full run"}, ` +
      `${Math.round(report.durationSeconds)} s; 1-minute load average ${report.loadAverage.start.toFixed(1)} at the ` +
      `start, ${report.loadAverage.end.toFixed(1)} at the end).`,
    "",
    `Code measured: commit \`${report.source.commit}\`${
      report.source.uncommitted.length === 0
        ? ""
        : `, plus uncommitted changes in ${report.source.uncommitted.length} file(s) of the measured packages (listed in results.json)`
    }.`,
    "",
    "Absolute times drift between shared machines; the ratios, measured side by side in the same run, are what to " +
      "compare. `pnpm bench` never fails on a timing: a missed target is a finding, recorded below.",
    "",
    "## How to run",
    "",
    "`pnpm bench` (about 15–20 minutes on 2 cores, about half of it the inbox and observability groups; set `TEST_DATABASE_URL=postgres://…` for the database groups, " +
      "which are skipped with a line saying so otherwise). `pnpm bench --quick` is a smoke run of about a minute whose " +
      "report goes to a scratch directory; `--only=verify,http` runs some groups, `--render` rebuilds this file from " +
      "`bench/results.json`. How to profile, and what the profiles of missed targets found: " +
      `[\`${PROFILE_NOTES}\`](${PROFILE_NOTES}).`,
    "",
    "## Targets",
    "",
    markdownTable({
      title: "Where we stand",
      columns: ["target", "goal", "measured", "verdict"],
      rows: targets.map((t) => [t.name, t.goal, t.measured, verdictMark(t)]),
    }),
  ];
  const before = readBefore(root);
  if (before !== undefined) out.push(...beforeAfterSection(root, before, report, markdownTable));
  for (const group of report.groups) {
    out.push(`## ${group.title}`, "");
    if (group.skipped) {
      out.push(`Skipped in this run: ${group.skipped}`, "");
      continue;
    }
    const separate = group.measuredSeparately;
    if (separate !== undefined) {
      out.push(
        `Measured in ${runOf(separate.groups, group.id)} (merged into the report): ${separate.date}, commit \`${separate.commit}\`, 1-minute load average ${separate.loadAverage.start.toFixed(1)} at the start, ${separate.loadAverage.end.toFixed(1)} at the end.`,
        "",
      );
    }
    out.push(...group.method.map((line) => `- ${line}`), "");
    for (const table of group.tables) out.push(markdownTable(table));
    for (const file of chartFiles.get(group.id) ?? []) out.push(`![${group.title}](${file})`, "");
  }
  out.push(
    "## Notes",
    "",
    `- [\`${PROFILE_NOTES}\`](${PROFILE_NOTES}): how to profile, the profiles of the targets missed, and what each ` +
      "round of changes made of them.",
    ...(before === undefined
      ? []
      : [
          `- [\`${COMMIT_NOTES}\`](${COMMIT_NOTES}): the jwt-rbac commits between the before and after runs.`,
        ]),
    `- [\`${OBSERVABILITY_NOTES}\`](${OBSERVABILITY_NOTES}): what metrics, tracing and the access audit cost, ` +
      "against a build of the packages without them (instrumentation off, and metrics on).",
    `- [\`${INBOX_NOTES}\`](${INBOX_NOTES}): the inbox end to end with ordering and send pacing: what each costs, ` +
      "where the time goes at 4 processes, and a faster claim that was tried and not kept.",
    "",
  );
  return `${out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

function verdictMark(target: Target): string {
  return target.met === null ? "not measured" : target.met ? "met" : "**missed**";
}

/** Which run measured a merged group: of it alone, or of the groups measured together (targets may span them). */
function runOf(groups: string[] | undefined, id: string): string {
  if (groups === undefined || groups.length <= 1) return "a run of this group alone";
  return `one run of the groups ${groups.map((name) => (name === id ? `${name} (this one)` : name)).join(", ")}`;
}
