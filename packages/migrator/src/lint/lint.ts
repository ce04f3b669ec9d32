import { join } from "node:path";
import { configError } from "@agent-platform/common/internal";
import { DEFAULT_DDL_LOCK_TIMEOUT_MS, timeoutOption } from "../migrator.js";
import { sqlMigrations } from "../sql-files.js";
import { compareVersions, parseVersion } from "../version.js";
import { unwrap } from "./ast.js";
import { parser, parseSql } from "./parser.js";
import { SourcePositions } from "./positions.js";
import type { LintRule } from "./rule.js";
import { type LintRuleId, type LintSeverity, lintRules, ruleById } from "./rules.js";
import { readTrivia, type Silence } from "./silences.js";
import { DirectoryState, type FileSettings, FileState } from "./state.js";

/** Larger files are refused, not parsed: they would hold the WebAssembly parser for a long time. */
export const MAX_LINT_FILE_BYTES = 4 * 1024 * 1024;

/** One thing a rule found in one migration file, with where and how to fix it. */
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

/** What `lint` reads and how: the files, the versions already shipped, the rules and the PostgreSQL version. */
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
  /**
   * The `statementTimeoutMs` the migrations run with (`createMigrator`'s option, unset by default). A value
   * above 0 is the statement_timeout of every transactional migration, which satisfies
   * `require-statement-timeout`.
   */
  readonly statementTimeoutMs?: number;
  /**
   * The oldest PostgreSQL major version the migrations must run on. Default 14. Some advice depends on it:
   * before 11 any column DEFAULT rewrites the table, before 12 SET NOT NULL always scans, from 19 REPACK
   * replaces CLUSTER and VACUUM FULL.
   */
  readonly postgresVersion?: number;
  /** Opt-in rules to run too (`require-table-schema`). */
  readonly enable?: readonly LintRuleId[];
}

/** The PostgreSQL major version `lint` assumes unless told (the oldest the PostgreSQL project still supports). */
export const DEFAULT_POSTGRES_VERSION = 14;

/** A finding before it is placed: `at` is a byte offset into the file. */
interface RawFinding {
  readonly rule: LintRuleId;
  readonly at: number;
  readonly message: string;
}

/** How one file is linted. */
export interface LintSettings extends FileSettings {
  readonly rules: readonly LintRule[];
}

/** The rules a run checks: every rule, the opt-in ones when enabled. */
function activeRules(enable: readonly string[] = []): LintRule[] {
  if (!Array.isArray(enable))
    throw configError("migrator", "`enable` must be an array of rule ids", "enable");
  for (const id of enable) {
    if (!ruleById(id)?.optIn) {
      throw configError(
        "migrator",
        `\`enable\` names rules that are off by default; ${JSON.stringify(id)} is not one`,
        "enable",
      );
    }
  }
  return lintRules.filter((rule) => !rule.optIn || enable.includes(rule.id));
}

function postgresVersionOption(value: unknown): number {
  if (value === undefined) return DEFAULT_POSTGRES_VERSION;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 9 || value > 99) {
    throw configError(
      "migrator",
      `\`postgresVersion\` must be a PostgreSQL major version such as 15; got ${String(value)}`,
      "postgresVersion",
    );
  }
  return value;
}

/** What `lint` found over a migrations directory. */
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
  const base = {
    runnerLockTimeout:
      timeoutOption("ddlLockTimeoutMs", options.ddlLockTimeoutMs ?? DEFAULT_DDL_LOCK_TIMEOUT_MS) > 0,
    runnerStatementTimeout: timeoutOption("statementTimeoutMs", options.statementTimeoutMs ?? 0) > 0,
    postgresVersion: postgresVersionOption(options.postgresVersion),
    rules: activeRules(options.enable),
  };
  const directory = new DirectoryState();
  const migrations = sqlMigrations(dir)
    .map((migration) => ({ migration, version: parseVersion(migration.version) }))
    .filter(({ version }) => after === undefined || compareVersions(version, after) > 0)
    .sort((a, b) => compareVersions(a.version, b.version));
  const findings: LintFinding[] = [];
  // Loaded up front, so that a missing parser is one clear error rather than a finding per file.
  if (migrations.length > 0) await parser();
  for (const { migration } of migrations) {
    const file = join(dir, `${migration.version}_${migration.name}.up.sql`);
    const source = migration.source ?? "";
    const settings = { ...base, transactional: migration.transaction !== false };
    for (const raw of await lintText(source, settings, directory)) {
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

/**
 * The findings of one up file, after its silences. `directory` carries what earlier files of the same
 * directory established (constraints validated).
 */
export async function lintText(
  source: string,
  settings: LintSettings,
  directory = new DirectoryState(),
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
  const state = new FileState(settings, directory);
  // PostgreSQL lowers only ASCII letters in unquoted identifiers.
  const lowered = Buffer.from(
    positions.bytes.map((byte) => (byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte)),
  );
  for (const { stmt, start, end } of parsed.statements) {
    const trivia = readTrivia(positions.bytes, start, end);
    const [kind, body] = unwrap(stmt);
    const statementFindings: RawFinding[] = [];
    const text = { bytes: positions.bytes, lowered, start, end };
    for (const rule of settings.rules) {
      rule.check?.(kind, body, {
        state,
        at: trivia.firstToken,
        text,
        report: (message, where) =>
          statementFindings.push({ rule: rule.id as LintRuleId, at: where ?? trivia.firstToken, message }),
      });
    }
    state.apply(kind, body, trivia.firstToken);
    raw.push(...applySilences(statementFindings, trivia.silences));
    for (const problem of trivia.problems)
      raw.push({ rule: "invalid-silence", at: problem.at, message: problem.message });
  }
  const fileEnd = {
    bytes: positions.bytes,
    lowered,
    start: positions.bytes.length,
    end: positions.bytes.length,
  };
  for (const rule of settings.rules) {
    rule.end?.({
      state,
      at: positions.bytes.length,
      text: fileEnd,
      report: (message, where) =>
        raw.push({ rule: rule.id as LintRuleId, at: where ?? positions.bytes.length, message }),
    });
  }
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
    const silenced =
      silenceable &&
      silences.some((silence) => silence.rules.some((id) => ruleById(id)?.id === finding.rule));
    if (silenced) used.add(finding.rule);
    return !silenced;
  });
  for (const silence of silences) {
    for (const id of silence.rules) {
      const rule = ruleById(id)?.id ?? id;
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
