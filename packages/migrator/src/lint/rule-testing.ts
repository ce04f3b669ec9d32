import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type LintOptions, type LintReport, lint } from "./lint.js";
import type { LintRuleId } from "./rules.js";

// What the rule tests beside each rule (rules/<id>.test.ts) share; test code only, imported by no entry. The
// migrator's test files share one module cache (isolate: false), so nothing here holds state between files.

/** A new empty temporary directory; the caller removes it. */
export function freshDir(): string {
  return mkdtempSync(join(tmpdir(), "migrator-lint-"));
}

/** Lints a fresh directory holding `files` (name -> text). */
// These run with the migrator's lock_timeout and a statement timeout, so the timeout rules stay quiet but in
// their own tests (which pass 0 / no statement timeout).
export async function lintFiles(
  files: Record<string, string>,
  options: LintOptions = {},
): Promise<LintReport> {
  const dir = freshDir();
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return await lint(dir, { statementTimeoutMs: 5000, ...options });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Lints one up file; `transaction: false` adds the no-transaction marker line. */
export const lintOne = (sql: string, transaction = true, options: LintOptions = {}) =>
  lintFiles(
    { "1.0.0_one.up.sql": transaction ? sql : `-- platform-migrate: no-transaction\n${sql}` },
    options,
  );

/** No lock_timeout and no statement_timeout from the migrator: what the timeout rules' own cases lint with. */
export const NO_TIMEOUTS: LintOptions = { ddlLockTimeoutMs: 0, statementTimeoutMs: 0 };
/** A case's `transaction` argument for a no-transaction migration. */
export const NO_TX = false;

/** The ids of a report's findings, in order. */
export const rulesOf = (report: LintReport) => report.findings.map((finding) => finding.rule);

/** A rule's unsafe SQL, a safe form of it, and what it is linted as: transactional or not, the lint's options. */
export type RuleCase = [unsafe: string, safe: string, transaction?: boolean, options?: LintOptions];

/**
 * The rule fires on each case's unsafe form and not on its safe one (which must parse). `accounts` is never
 * created in these files, so it existed before the migration.
 */
export function describeRuleCases(rule: LintRuleId, cases: readonly RuleCase[]): void {
  describe(`${rule}: its own good and bad SQL`, () => {
    it.each(cases)(
      "fires on %j, not on the safe form",
      async (unsafe, safe, transaction = true, options = {}) => {
        const bad = await lintOne(unsafe, transaction, options);
        expect(rulesOf(bad)).toContain(rule);
        const good = await lintOne(safe, transaction, options);
        expect(rulesOf(good)).not.toContain(rule);
        expect(rulesOf(good)).not.toContain("parse-error");
      },
    );
  });
}
