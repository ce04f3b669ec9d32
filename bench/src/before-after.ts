import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunReport } from "./report.js";
import type { Table } from "./types.js";

/**
 * The run a round of package changes started from, kept as `bench/results.before.json` (a copy of the results.json
 * it replaced); when present, BENCHMARKS.md shows it side by side with the current run.
 */
export function readBefore(root: string): RunReport | undefined {
  const file = join(root, "bench", "results.before.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as RunReport) : undefined;
}

/** The rows a package change can move: our own rows and ratios, not the peers' or the references'. */
const isOurs = (label: string) => /\bours\b/.test(label);

/** A row's label in the before run: our rows were `authenticate()` there (the promise-returning wrapper), now `authenticateNow()` as the adapters call it. */
const labelBefore = (label: string) => label.replaceAll("authenticateNow()", "authenticate()");

/** The groups that measure `@agent-platform/jwt-rbac`, whose performance round this comparison records. */
const COMPARED_GROUPS: ReadonlySet<string> = new Set(["verify", "http"]);

/** The jwt-rbac commits between the two measured commits (empty when git cannot tell, e.g. outside the repository). */
function commitsBetween(root: string, before: string, after: string): string[] {
  try {
    const log = execFileSync(
      "git",
      ["log", "--format=%h %s", `${before}..${after}`, "--", "packages/jwt-rbac"],
      {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      },
    ).trim();
    return log === "" ? [] : log.split("\n");
  } catch {
    return [];
  }
}

/** One table per measured table holding our rows: each cell "before → after"; plus the targets, before and after. */
export function beforeAfterSection(
  root: string,
  before: RunReport,
  after: RunReport,
  render: (table: Table) => string,
): string[] {
  // A group measured alone and merged into the report carries its own run: the after side is each group's run.
  const compared = after.groups.filter((g) => COMPARED_GROUPS.has(g.id));
  const runOf = (group: (typeof compared)[number]) =>
    group.measuredSeparately ?? { date: after.date, commit: after.source.commit };
  const latest =
    compared.map(runOf).sort((a, b) => b.date.localeCompare(a.date))[0]?.commit ?? after.source.commit;
  const commits = commitsBetween(root, before.source.commit, latest);
  const out = [
    "## Before and after (jwt-rbac)",
    "",
    `Before: the run of ${before.date} on commit \`${before.source.commit}\` ([\`bench/results.before.json\`](bench/results.before.json)); ` +
      `after: the runs in this report (${compared.map((g) => `${g.id} on commit \`${runOf(g).commit}\``).join(", ")}). ` +
      (commits.length === 0
        ? "No jwt-rbac commits lie between them."
        : `The jwt-rbac commits in between: ${commits.map((c) => `\`${c.slice(0, c.indexOf(" "))}\` (${c.slice(c.indexOf(" ") + 1)})`).join("; ")}.`) +
      " Both runs are on the same shared machine; compare the ratios, each measured side by side within its own run.",
    "",
  ];
  const beforeTargets = new Map(before.groups.flatMap((g) => g.targets).map((t) => [t.name, t]));
  const targetRows = compared
    .flatMap((g) => g.targets)
    .flatMap((t) => {
      const b = beforeTargets.get(t.name);
      const mark = (met: boolean | null | undefined) =>
        met === null || met === undefined ? "—" : met ? "met" : "missed";
      return b === undefined || b.measured === t.measured
        ? []
        : [[t.name, b.measured, mark(b.met), t.measured, mark(t.met)]];
    });
  if (targetRows.length > 0) {
    out.push(
      render({
        title: "Targets whose figures moved",
        columns: ["target", "before", "verdict before", "after", "verdict after"],
        rows: targetRows,
      }),
    );
  }
  for (const group of compared) {
    const beforeGroup = before.groups.find((g) => g.id === group.id);
    for (const table of group.tables) {
      const beforeTable = beforeGroup?.tables.find((t) => t.title === table.title);
      if (beforeTable === undefined) continue;
      const rows = table.rows.flatMap((row) => {
        const label = row[0] ?? "";
        const beforeRow = beforeTable.rows.find((r) => r[0] === label || r[0] === labelBefore(label));
        if (!isOurs(label) || beforeRow === undefined) return [];
        return [[label, ...row.slice(1).map((cell, i) => `${beforeRow[i + 1] ?? "—"} → ${cell}`)]];
      });
      if (rows.length > 0)
        out.push(render({ title: `${table.title} (before → after)`, columns: table.columns, rows }));
    }
  }
  return out;
}
