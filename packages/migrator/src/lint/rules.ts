/** How a finding counts: errors fail `lint` (exit status 1), warnings are reported only. */
export type LintSeverity = "error" | "warning";

export interface LintRule {
  readonly id: string;
  readonly severity: LintSeverity;
  /** What the rule catches and why, in one sentence. */
  readonly why: string;
  /** What to write instead. */
  readonly instead: string;
  /** The squawk rule id with the same intent, so squawk users can map their configuration. */
  readonly squawk?: string;
  /** Findings about the file itself (it could not be read, parsed or silenced) cannot be silenced. */
  readonly silenceable: boolean;
}

/**
 * Every rule of `platform-migrate lint`, the one place their ids, severities and advice are written; the
 * README's rule table lists the same ids (a test compares them).
 */
export const lintRules = [
  {
    id: "require-concurrent-index-creation",
    severity: "error",
    why: "CREATE INDEX without CONCURRENTLY on a table that existed before the migration blocks its writes for the whole build.",
    instead:
      "CREATE INDEX CONCURRENTLY in a migration of its own marked `-- platform-migrate: no-transaction`.",
    squawk: "require-concurrent-index-creation",
    silenceable: true,
  },
  {
    id: "require-concurrent-index-deletion",
    severity: "warning",
    why: "DROP INDEX without CONCURRENTLY takes an ACCESS EXCLUSIVE lock on the index's table.",
    instead:
      "DROP INDEX CONCURRENTLY in a migration of its own marked `-- platform-migrate: no-transaction`.",
    squawk: "require-concurrent-index-deletion",
    silenceable: true,
  },
  {
    id: "concurrently-in-transaction",
    severity: "error",
    why: "CONCURRENTLY (index create, drop, reindex; partition detach) cannot run inside a transaction block: the migration fails at run time.",
    instead:
      "Move the statement to a migration of its own whose first line is `-- platform-migrate: no-transaction`.",
    squawk: "ban-concurrent-index-creation-in-transaction",
    silenceable: false,
  },
  {
    id: "no-transaction-single-statement",
    severity: "error",
    why: "A no-transaction migration runs as one query, and PostgreSQL runs a multi-statement query as one implicit transaction: CONCURRENTLY fails and a failure leaves no clear state.",
    instead: "One statement per no-transaction migration.",
    silenceable: false,
  },
  {
    id: "constraint-missing-not-valid",
    severity: "error",
    why: "ADD CONSTRAINT (CHECK, FOREIGN KEY) on an existing table validates every row while holding a lock that blocks writes (and, for a foreign key, writes to the referenced table).",
    instead:
      "ADD CONSTRAINT ... NOT VALID, then VALIDATE CONSTRAINT in a later migration (it takes a lighter lock).",
    squawk: "constraint-missing-not-valid (and adding-foreign-key-constraint)",
    silenceable: true,
  },
  {
    id: "changing-column-type",
    severity: "error",
    why: "ALTER COLUMN ... TYPE on an existing table usually rewrites the table and its indexes under an ACCESS EXCLUSIVE lock.",
    instead:
      "Add a new column, backfill it in batches, switch the code over, then drop the old column; silence with a reason for binary-compatible changes (e.g. widening varchar).",
    squawk: "changing-column-type",
    silenceable: true,
  },
  {
    id: "set-not-null",
    severity: "error",
    why: "SET NOT NULL on an existing column scans the whole table under an ACCESS EXCLUSIVE lock.",
    instead:
      "ADD CONSTRAINT ... CHECK (col IS NOT NULL) NOT VALID, VALIDATE it in a later migration, then SET NOT NULL (PostgreSQL 12+ uses the constraint and skips the scan).",
    squawk: "adding-not-nullable-field",
    silenceable: true,
  },
  {
    id: "adding-required-field",
    severity: "error",
    why: "ADD COLUMN ... NOT NULL without a DEFAULT fails on a table that has rows.",
    instead: "Add the column with a constant DEFAULT, or nullable and backfill, then add NOT NULL as above.",
    squawk: "adding-required-field",
    silenceable: true,
  },
  {
    id: "volatile-default",
    severity: "error",
    why: "ADD COLUMN with a volatile DEFAULT (random(), clock_timestamp(), a sequence, an identity, a stored generated column) rewrites the whole table under an ACCESS EXCLUSIVE lock; a constant or stable default (now()) does not.",
    instead: "Add the column without the default (or with a constant), set the default, backfill in batches.",
    squawk: "adding-field-with-default",
    silenceable: true,
  },
  {
    id: "adding-serial-primary-key-field",
    severity: "error",
    why: "Adding a serial column or a PRIMARY KEY to an existing table rewrites it or builds a unique index under an ACCESS EXCLUSIVE lock.",
    instead:
      "CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT ... PRIMARY KEY USING INDEX; prefer identity columns over serial.",
    squawk: "adding-serial-primary-key-field",
    silenceable: true,
  },
  {
    id: "disallowed-unique-constraint",
    severity: "error",
    why: "ADD UNIQUE on an existing table builds its index under an ACCESS EXCLUSIVE lock, blocking reads and writes.",
    instead: "CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT ... UNIQUE USING INDEX.",
    squawk: "disallowed-unique-constraint",
    silenceable: true,
  },
  {
    id: "ban-drop-table",
    severity: "warning",
    why: "Dropping a table breaks the code still running against it during a rolling deploy, and loses its data.",
    instead: "Stop using the table in a release first; drop it in a later one.",
    squawk: "ban-drop-table",
    silenceable: true,
  },
  {
    id: "ban-drop-column",
    severity: "warning",
    why: "Dropping a column breaks the code still running against it during a rolling deploy, and loses its data.",
    instead: "Stop using the column in a release first; drop it in a later one.",
    squawk: "ban-drop-column",
    silenceable: true,
  },
  {
    id: "renaming-table",
    severity: "warning",
    why: "Renaming a table breaks the code still running against the old name.",
    instead: "Create the new table (or a view with the new name), move the code over, then drop the old one.",
    squawk: "renaming-table",
    silenceable: true,
  },
  {
    id: "renaming-column",
    severity: "warning",
    why: "Renaming a column breaks the code still running against the old name.",
    instead: "Add the new column, write both, backfill, move the reads, then drop the old column.",
    squawk: "renaming-column",
    silenceable: true,
  },
  {
    id: "require-lock-timeout",
    severity: "warning",
    why: "A transactional migration that locks an existing table without a lock_timeout waits behind any long query, and every query on that table queues behind it: an outage.",
    instead: "SET LOCAL lock_timeout = '2s'; before the first such statement (and retry the migration).",
    squawk: "require-timeout-settings",
    silenceable: true,
  },
  {
    id: "identifier-too-long",
    severity: "error",
    why: "PostgreSQL silently truncates identifiers to 63 bytes, so two long names can collide and code using the full name does not find the object.",
    instead: "Names of at most 63 bytes (UTF-8).",
    silenceable: true,
  },
  {
    id: "ban-drop-database",
    severity: "error",
    why: "A migration that drops a database destroys every schema in it.",
    instead: "Drop databases by hand, never from a migration.",
    squawk: "ban-drop-database",
    silenceable: true,
  },
  {
    id: "transaction-nesting",
    severity: "error",
    why: "BEGIN, COMMIT or ROLLBACK in a migration breaks the migrator's own transaction: the run is no longer all or nothing, and its history row may not match what was applied.",
    instead:
      "Leave transactions to the migrator; split the work into migrations, or mark one no-transaction.",
    squawk: "transaction-nesting",
    silenceable: false,
  },
  {
    id: "prefer-timestamptz",
    severity: "warning",
    why: "timestamp without time zone stores wall-clock time with no zone, so values change meaning with the session's TimeZone.",
    instead: "timestamptz.",
    squawk: "prefer-timestamptz",
    silenceable: true,
  },
  {
    id: "ban-char-field",
    severity: "warning",
    why: "char(n) pads with spaces and is no faster than text or varchar.",
    instead: "text (with a CHECK on length if needed).",
    squawk: "ban-char-field",
    silenceable: true,
  },
  {
    id: "parse-error",
    severity: "error",
    why: "PostgreSQL's parser rejects the file: the migration would fail at run time.",
    instead: "Fix the syntax at the position given (PostgreSQL's own message).",
    silenceable: false,
  },
  {
    id: "file-too-large",
    severity: "error",
    why: "The file is larger than the linter reads (see the message); huge migrations are usually data loads that belong elsewhere.",
    instead: "Split the file, or load the data with COPY outside the migrations.",
    silenceable: false,
  },
  {
    id: "invalid-silence",
    severity: "error",
    why: "A silence comment without a reason, with an unknown or unsilenceable rule id, or with no statement after it silences nothing that a reviewer can check.",
    instead:
      "`-- platform-migrate-lint-ignore <rule-id>[, <rule-id>]: <reason>` on a line right before the statement.",
    silenceable: false,
  },
  {
    id: "unused-silence",
    severity: "warning",
    why: "A silence whose rule does not fire on the statement after it hides nothing today but would hide a future finding.",
    instead: "Remove it.",
    silenceable: false,
  },
] as const satisfies readonly LintRule[];

export type LintRuleId = (typeof lintRules)[number]["id"];

const byId: ReadonlyMap<string, LintRule> = new Map(lintRules.map((rule) => [rule.id, rule]));

/** The rule with this id, or undefined for an id the linter does not have. */
export function ruleById(id: string): LintRule | undefined {
  return byId.get(id);
}
