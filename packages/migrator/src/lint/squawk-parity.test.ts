import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lintText } from "./lint.js";
import { lintRules, ruleById } from "./rules.js";

/**
 * squawk's own rule tests, as data (`../shared/vectors/squawk/` at the repository root, never copied in):
 * the lint must agree with squawk on at least 97% of each rule's cases, and every case where it does not must
 * be listed in the README's "Deliberate differences from squawk" table with its reason.
 */
const vectors = join(import.meta.dirname, "../../../../../shared/vectors/squawk");
const present = existsSync(join(vectors, "cases.json"));
if (!present)
  console.warn(`squawk parity: skipped, ${vectors} is absent (the shared test vectors are not checked out)`);

interface SquawkCase {
  readonly id: string;
  readonly squawk_rule: string;
  readonly test: string;
  readonly sql: string;
  readonly squawk_fires: boolean;
  /** The settings the test ran with, where it set any. */
  readonly squawk_settings?: { readonly assume_in_transaction?: boolean; readonly pg_version?: string };
}
interface SquawkMeta {
  readonly rules: readonly { readonly id: string; readonly deprecated_alias_for?: readonly string[] }[];
  readonly rules_consulting_assume_in_transaction: readonly string[];
  readonly default_settings: { readonly pg_version: string };
}

const DISABLE_ASSUME = "squawk-disable-assume-in-transaction";

/** The PostgreSQL version a case's test lints for: its `squawk_settings`, else squawk's default. */
function postgresVersion(testCase: SquawkCase, meta: SquawkMeta): number {
  return Number(testCase.squawk_settings?.pg_version ?? meta.default_settings.pg_version);
}

/**
 * squawk's `assume_in_transaction` says whether the tool running the file wraps it in a transaction; here a
 * file runs in one unless marked no-transaction. So for the rules that read the setting, a case without it
 * (or with squawk's per-file disable comment) is linted as a no-transaction migration; every other case as a
 * transactional one that another tool applies (no lock_timeout or statement_timeout from the migrator).
 */
async function linted(testCase: SquawkCase, meta: SquawkMeta): Promise<boolean> {
  const assumes = testCase.squawk_settings?.assume_in_transaction === true;
  const readsSetting = meta.rules_consulting_assume_in_transaction.includes(testCase.squawk_rule);
  const findings = await lintText(testCase.sql, {
    transactional: !readsSetting || (assumes && !testCase.sql.includes(DISABLE_ASSUME)),
    runnerLockTimeout: false,
    runnerStatementTimeout: false,
    postgresVersion: postgresVersion(testCase, meta),
    rules: lintRules,
  });
  return findings.some((finding) => finding.rule === testCase.squawk_rule);
}

/** The README's deliberate differences: case id -> reason. */
function documentedDifferences(): Map<string, string> {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = readme.split("### Deliberate differences from squawk")[1]?.split(/\n#{2,3} /)[0] ?? "";
  return new Map(
    [...section.matchAll(/^\| `([^`]+::[^`]+)` +\| (.+?) *\|$/gm)].map(([, id, reason]) => [
      String(id),
      String(reason),
    ]),
  );
}

describe.skipIf(!present)("parity with squawk's own rule tests", async () => {
  const cases: SquawkCase[] = present ? JSON.parse(readFileSync(join(vectors, "cases.json"), "utf8")) : [];
  const meta: SquawkMeta = present
    ? JSON.parse(readFileSync(join(vectors, "squawk-meta.json"), "utf8"))
    : { rules: [], rules_consulting_assume_in_transaction: [], default_settings: { pg_version: "15" } };
  const results = await Promise.all(
    cases.map(async (testCase) => ({ testCase, ours: await linted(testCase, meta) })),
  );
  const differing = results.filter(({ testCase, ours }) => ours !== testCase.squawk_fires);

  it("every squawk rule has a rule of the same id here", () => {
    const squawkRules = meta.rules.filter((rule) => !rule.deprecated_alias_for).map((rule) => rule.id);
    expect(squawkRules.filter((id) => ruleById(id)?.id !== id)).toEqual([]);
  });

  // A rule under 97% passes only when each case it differs on is a documented deliberate difference.
  it("agrees on at least 97% of each rule's cases, but for deliberate differences", () => {
    const byRule = new Map<string, { agree: number; total: number; documented: number }>();
    const documented = documentedDifferences();
    for (const { testCase, ours } of results) {
      const row = byRule.get(testCase.squawk_rule) ?? { agree: 0, total: 0, documented: 0 };
      row.total++;
      if (ours === testCase.squawk_fires) row.agree++;
      else if (documented.has(testCase.id)) row.documented++;
      byRule.set(testCase.squawk_rule, row);
    }
    const table = [...byRule].map(([rule, row]) => ({
      rule,
      ...row,
      percent: (100 * row.agree) / row.total,
    }));
    const lines = table.map(
      (row) =>
        `  ${row.percent.toFixed(1).padStart(5)}%  ${`${row.agree}/${row.total}`.padStart(5)}  ${row.rule}${row.documented ? `  (${row.documented} deliberate)` : ""}`,
    );
    console.log(`squawk parity, ${cases.length} cases:\n${lines.join("\n")}`);
    expect(table.filter((row) => row.percent < 97 && row.agree + row.documented < row.total)).toEqual([]);
  });

  it("every disagreement is a deliberate difference the README lists with its reason, and only those", () => {
    const documented = documentedDifferences();
    const undocumented = differing.filter(({ testCase }) => !documented.has(testCase.id));
    expect(
      undocumented.map(({ testCase }) => `${testCase.id} (squawk fires: ${testCase.squawk_fires})`),
    ).toEqual([]);
    const ids = new Set(differing.map(({ testCase }) => testCase.id));
    expect([...documented.keys()].filter((id) => !ids.has(id))).toEqual([]);
  });
});
