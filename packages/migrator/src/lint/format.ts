import type { LintReport } from "./lint.js";

/** `file:line:column: severity rule-id: message` per finding (the form editors and CI annotate), then a summary. */
export function formatLintReport(report: LintReport): string {
  const lines = report.findings.map(
    (f) => `${f.file}:${f.line}:${f.column}: ${f.severity} ${f.rule}: ${f.message}\n  hint: ${f.hint}`,
  );
  const files = `${report.files} file${report.files === 1 ? "" : "s"}`;
  lines.push(`${files} linted: ${report.errors} error(s), ${report.warnings} warning(s)`);
  return lines.join("\n");
}
