import { join } from "node:path";
import { DEFAULT_DDL_LOCK_TIMEOUT_MS, timeoutOption } from "../migrator.js";
import { sqlMigrations } from "../sql-files.js";
import { compareVersions, parseVersion } from "../version.js";
import { checkStatement, FileState, type RawFinding } from "./checks.js";
import { checkNames } from "./names.js";
import { parseSql } from "./parser.js";
import { SourcePositions } from "./positions.js";
import { type LintRuleId, type LintSeverity, ruleById } from "./rules.js";
import { readTrivia, type Silence } from "./silences.js";

/** Larger files are refused, not parsed: they would hold the WebAssembly parser for a long time. */
export const MAX_LINT_FILE_BYTES = 4 * 1024 * 1024;

export interface LintFinding {
  readonly rule: LintRuleId;
  readonly severity: LintSeverity;
  /** The up file, as `dir` joined with its name. */
  readonly file: string;
  readonly version: string;
  /** 1-based; the column counts characters (code points). */
  readonly line: number;
  readonly column: number;
  readonly message: string;
  /** What to do instead (the rule's advice). */
  readonly hint: string;
}

export interface LintOptions {
  /**
   * Lint only migrations above this version: those at or below it have shipped and cannot change (their
   * checksums are recorded), like strong_migrations' `start_after`.
   */
  readonly startAfter?: string;
  /**
   * The `ddlLockTimeoutMs` the migrations run with (`createMigrator`'s option, same default). The migrator
   * sets it as the lock_timeout of every transactional migration, which satisfies `require-lock-timeout`;
   * pass 0 when they run without one (`ddlLockTimeoutMs: 0`, or another tool applies them).
   */
  readonly ddlLockTimeoutMs?: number;
}

export interface LintReport {
  /** How many up files were linted. */
  readonly files: number;
  /** In file (version) order, then by position. */
  readonly findings: readonly LintFinding[];
  readonly errors: number;
  readonly warnings: number;
}

/**
 * Static checks of the SQL migrations in `dir` (the `<version>_<name>.up.sql` files `sqlMigrations` reads)
 * on PostgreSQL's own parser, in version order. Throws like `sqlMigrations` when the directory cannot be
 * read or a file name is not a migration's; everything about a file's content is a finding.
 */
export async function lint(dir: string, options: LintOptions = {}): Promise<LintReport> {
  const after = options.startAfter === undefined ? undefined : parseVersion(options.startAfter);
  const runnerLockTimeout =
    timeoutOption("ddlLockTimeoutMs", options.ddlLockTimeoutMs ?? DEFAULT_DDL_LOCK_TIMEOUT_MS) > 0;
  const migrations = sqlMigrations(dir)
    .map((migration) => ({ migration, version: parseVersion(migration.version) }))
    .filter(({ version }) => after === undefined || compareVersions(version, after) > 0)
    .sort((a, b) => compareVersions(a.version, b.version));
  const findings: LintFinding[] = [];
  for (const { migration } of migrations) {
    const file = join(dir, `${migration.version}_${migration.name}.up.sql`);
    const source = migration.source ?? "";
    for (const raw of await lintSource(source, migration.transaction !== false, runnerLockTimeout)) {
      const rule = ruleById(raw.rule);
      findings.push({
        rule: raw.rule,
        severity: rule?.severity ?? "error",
        file,
        version: migration.version,
        line: raw.line,
        column: raw.column,
        message: raw.message,
        hint: rule?.instead ?? "",
      });
    }
  }
  const errors = findings.filter((finding) => finding.severity === "error").length;
  return { files: migrations.length, findings, errors, warnings: findings.length - errors };
}

interface PlacedFinding {
  readonly rule: LintRuleId;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** The findings of one up file, after its silences. */
async function lintSource(
  source: string,
  transactional: boolean,
  runnerLockTimeout: boolean,
): Promise<PlacedFinding[]> {
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > MAX_LINT_FILE_BYTES) {
    return [
      {
        rule: "file-too-large",
        line: 1,
        column: 1,
        message: `the file is ${bytes} bytes; the linter reads at most ${MAX_LINT_FILE_BYTES}`,
      },
    ];
  }
  const positions = new SourcePositions(source);
  // The parser reads a C string and would silently ignore everything after a NUL.
  const nul = positions.bytes.indexOf(0);
  if (nul !== -1) {
    return [
      {
        rule: "parse-error",
        ...positions.atByte(nul),
        message: "a NUL character, which a query cannot hold",
      },
    ];
  }
  const parsed = await parseSql(source, bytes);
  if (!parsed.ok) {
    const at = parsed.cursor === undefined ? { line: 1, column: 1 } : positions.atCharacter(parsed.cursor);
    return [{ rule: "parse-error", ...at, message: parsed.message }];
  }
  const raw: RawFinding[] = [];
  const state = new FileState(transactional, transactional && runnerLockTimeout);
  // PostgreSQL lowers only ASCII letters in unquoted identifiers.
  const lowered = Buffer.from(
    positions.bytes.map((byte) => (byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte)),
  );
  parsed.statements.forEach(({ stmt, start, end }, index) => {
    const trivia = readTrivia(positions.bytes, start, end);
    const statementFindings = [
      ...checkStatement(stmt, trivia.firstToken, state),
      ...checkNames(stmt, trivia.firstToken, { bytes: positions.bytes, lowered, start, end }),
    ];
    if (!transactional && index === 1) {
      statementFindings.push({
        rule: "no-transaction-single-statement",
        at: trivia.firstToken,
        message: "a second statement in a no-transaction migration",
      });
    }
    raw.push(...applySilences(statementFindings, trivia.silences));
    for (const problem of trivia.problems)
      raw.push({ rule: "invalid-silence", at: problem.at, message: problem.message });
  });
  const last = parsed.statements.at(-1);
  const tail = readTrivia(positions.bytes, last?.end ?? 0, positions.bytes.length, true);
  for (const { at } of tail.silences) {
    raw.push({ rule: "invalid-silence", at, message: "a silence with no statement after it" });
  }
  for (const problem of tail.problems)
    raw.push({ rule: "invalid-silence", at: problem.at, message: problem.message });
  return raw
    .sort((a, b) => a.at - b.at)
    .map(({ rule, at, message }) => ({ rule, ...positions.atByte(at), message }));
}

/** Drops the findings a statement's silences name; a silence that drops nothing is itself reported. */
function applySilences(findings: RawFinding[], silences: readonly Silence[]): RawFinding[] {
  const used = new Set<string>();
  const kept = findings.filter((finding) => {
    const silenceable = ruleById(finding.rule)?.silenceable === true;
    const silenced = silenceable && silences.some((silence) => silence.rules.includes(finding.rule));
    if (silenced) used.add(finding.rule);
    return !silenced;
  });
  for (const silence of silences) {
    for (const rule of silence.rules) {
      if (!used.has(rule) && ruleById(rule)?.silenceable) {
        kept.push({
          rule: "unused-silence",
          at: silence.at,
          message: `${rule} does not fire on the statement after this silence`,
        });
      }
    }
  }
  return kept;
}
