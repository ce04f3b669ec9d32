import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidVersionError } from "../errors.js";
import { type LintOptions, type LintReport, lint, MAX_LINT_FILE_BYTES } from "./lint.js";
import { type LintRuleId, lintRules } from "./rules.js";

const root = mkdtempSync(join(tmpdir(), "migrator-lint-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

/** Lints a fresh directory holding `files` (name -> text). */
// These run with the migrator's lock_timeout and a statement timeout, so the timeout rules stay quiet but in
// their own tests (which pass 0 / no statement timeout).
function lintFiles(files: Record<string, string>, options: LintOptions = {}): Promise<LintReport> {
  const dir = join(root, String(dirs++));
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return lint(dir, { statementTimeoutMs: 5000, ...options });
}

/** Lints one up file; `transaction: false` adds the no-transaction marker line. */
const lintOne = (sql: string, transaction = true, options: LintOptions = {}) =>
  lintFiles(
    { "1.0.0_one.up.sql": transaction ? sql : `-- platform-migrate: no-transaction\n${sql}` },
    options,
  );
const NO_TIMEOUTS: LintOptions = { ddlLockTimeoutMs: 0, statementTimeoutMs: 0 };

const RULE_TABLE_START = "| rule ";

/** The README's rule table: one row per rule file, columns padded like the rest of the README's tables. */
function ruleTable(): string {
  const header = ["rule", "severity", "catches, and why", "instead", "squawk"];
  const rows = lintRules.map((rule) => [
    `\`${rule.id}\`${rule.silenceable ? "" : " ¹"}${rule.optIn ? " ²" : ""}`,
    rule.severity,
    rule.why,
    rule.instead,
    rule.squawk ? `\`${rule.squawk}\`` : "—",
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] as number)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

const rulesOf = (report: LintReport) => report.findings.map((finding) => finding.rule);

const NO_TX = false;
// `accounts` is never created in these files, so it existed before the migration.
const cases: [LintRuleId, string, string, boolean?, LintOptions?][] = [
  [
    "require-concurrent-index-creation",
    "create index accounts_email_idx on accounts (email);",
    "create table t (id bigint); create index t_id_idx on t (id);",
  ],
  [
    "require-concurrent-index-deletion",
    "drop index accounts_email_idx;",
    "drop index concurrently accounts_email_idx;",
    NO_TX,
  ],
  [
    "ban-concurrent-index-creation-in-transaction",
    "create index concurrently accounts_email_idx on accounts (email);",
    "create index accounts_email_idx on accounts (email);",
  ],
  [
    "no-transaction-single-statement",
    "create index concurrently a_idx on accounts (a); create index concurrently b_idx on accounts (b);",
    "create index concurrently a_idx on accounts (a);",
    NO_TX,
  ],
  [
    "constraint-missing-not-valid",
    "alter table accounts add constraint accounts_owner_fk foreign key (owner) references users (id);",
    "alter table accounts add constraint accounts_owner_fk foreign key (owner) references users (id) not valid;",
  ],
  [
    "changing-column-type",
    "alter table accounts alter column id type bigint;",
    "create table t (id bigint); alter table t alter column id type bigint;",
  ],
  [
    "adding-not-nullable-field",
    "alter table accounts alter column email set not null;",
    "create table t (email text); alter table t alter column email set not null;",
  ],
  [
    "adding-required-field",
    "alter table accounts add column plan text not null;",
    "alter table accounts add column plan text not null default 'free';",
  ],
  [
    "adding-field-with-default",
    "alter table accounts add column token uuid default gen_random_uuid();",
    "alter table accounts add column created_at timestamptz default now();",
  ],
  [
    "adding-serial-primary-key-field",
    "alter table accounts add column id bigserial;",
    "alter table accounts add constraint accounts_pkey primary key using index accounts_id_idx;",
  ],
  [
    "disallowed-unique-constraint",
    "alter table accounts add constraint accounts_email_key unique (email);",
    "alter table accounts add constraint accounts_email_key unique using index accounts_email_idx;",
  ],
  ["ban-drop-table", "drop table accounts;", "create table t (id bigint); drop table t;"],
  [
    "ban-drop-column",
    "alter table accounts drop column email;",
    "create table t (id bigint, email text); alter table t drop column email;",
  ],
  [
    "renaming-table",
    "alter table accounts rename to users;",
    "create table t (id bigint); alter table t rename to t2; create index t2_idx on t2 (id);",
  ],
  [
    "renaming-column",
    "alter table accounts rename column email to mail;",
    "create table t (email text); alter table t rename column email to mail;",
  ],
  [
    "require-lock-timeout",
    "alter table accounts add column note text;",
    "set local lock_timeout = '2s';\nalter table accounts add column note text;",
    true,
    NO_TIMEOUTS,
  ],
  [
    "require-statement-timeout",
    "comment on table accounts is 'who pays';",
    "set local statement_timeout = '5s';\ncomment on table accounts is 'who pays';",
    true,
    NO_TIMEOUTS,
  ],
  [
    "require-concurrent-reindex",
    "reindex index accounts_email_idx;",
    "reindex index concurrently accounts_email_idx;",
    NO_TX,
  ],
  [
    "require-concurrent-partition-detach",
    "alter table events detach partition events_2020;",
    "alter table events detach partition events_2020 concurrently;",
    NO_TX,
  ],
  [
    "adding-foreign-key-constraint",
    "alter table accounts add column owner bigint references users (id);",
    "alter table accounts add constraint accounts_owner_fk foreign key (owner) references users (id) not valid;",
  ],
  [
    "ban-drop-not-null",
    "alter table accounts alter column email drop not null;",
    "alter table accounts alter column email set default '';",
  ],
  ["ban-truncate-cascade", "truncate accounts cascade;", "truncate accounts;"],
  [
    "ban-duplicate-column-assignments",
    "update accounts set tags[1] = 'a', tags[1] = 'b';",
    "update accounts set tags[1] = 'a', tags[2] = 'b', tags[i] = 'c', tags[i] = 'd';",
  ],
  [
    "prefer-robust-stmts",
    "create index concurrently accounts_email_idx on accounts (email);",
    "create index concurrently if not exists accounts_email_idx on accounts (email);",
    NO_TX,
  ],
  ["ban-uncommitted-transaction", "begin;\nselect 1;", "begin;\nselect 1;\ncommit;", NO_TX],
  [
    "ban-duplicate-column-assignments",
    "update accounts set plan = 'free', plan = 'paid';",
    "update accounts set plan = 'free', note = 'paid';",
  ],
  [
    "ban-create-domain-with-constraint",
    "create domain email as text check (value like '%@%');",
    "create domain email as text;",
  ],
  [
    "ban-alter-domain-with-add-constraint",
    "alter domain email add constraint has_at check (value like '%@%');",
    "alter domain email drop constraint has_at;",
  ],
  [
    "require-enum-value-ordering",
    "alter type plan add value 'team';",
    "alter type plan add value 'team' after 'pro';",
  ],
  ["prefer-text-field", "create table t (name varchar(100));", "create table t (name text);"],
  ["prefer-bigint-over-int", "create table t (id integer);", "create table t (id bigint);"],
  ["prefer-bigint-over-smallint", "create table t (rank smallint);", "create table t (rank bigint);"],
  [
    "prefer-identity",
    "create table t (id bigserial);",
    "create table t (id bigint generated by default as identity);",
  ],
  ["prefer-repack", "vacuum full accounts;", "vacuum accounts;", NO_TX, { postgresVersion: 19 }],
  [
    "require-table-schema",
    "create table t (id bigint);",
    "create table public.t (id bigint);",
    true,
    { enable: ["require-table-schema"] },
  ],
  [
    "identifier-too-long",
    `create table ${"t".repeat(64)} (id bigint);`,
    `create table ${"t".repeat(63)} (id bigint);`,
  ],
  ["ban-drop-database", "drop database accounts;", "drop schema accounts;", NO_TX],
  [
    "transaction-nesting",
    "begin; create table t (id bigint); commit;",
    "savepoint s; create table t (id bigint); release savepoint s;",
  ],
  ["prefer-timestamptz", "create table t (at timestamp);", "create table t (at timestamptz);"],
  ["ban-char-field", "create table t (code char(2));", "create table t (code text);"],
  ["parse-error", "create tabel t (id bigint);", "create table t (id bigint);"],
  [
    "invalid-silence",
    "-- platform-migrate-lint-ignore ban-drop-table\ndrop table accounts;",
    "-- platform-migrate-lint-ignore ban-drop-table: nothing has read it since 2.0\ndrop table accounts;",
  ],
  [
    "unused-silence",
    "-- platform-migrate-lint-ignore ban-drop-table: nothing reads it\ncreate table t (id bigint);",
    "-- platform-migrate-lint-ignore ban-drop-table: nothing reads it\ndrop table accounts;",
  ],
];

describe("lint rules", () => {
  it("every rule has a case here (file-too-large has its own test)", () => {
    const covered = new Set<string>([...cases.map(([rule]) => rule), "file-too-large"]);
    expect(lintRules.map((rule) => rule.id).filter((id) => !covered.has(id))).toEqual([]);
  });

  // The table is generated from the rule files: `UPDATE_README=1 npx vitest run src/lint/lint.test.ts` rewrites it.
  it("the README's rule table is the one generated from the rule files", () => {
    const path = new URL("../../README.md", import.meta.url);
    const readme = readFileSync(path, "utf8");
    const [before, rest] = readme.split(RULE_TABLE_START) as [string, string | undefined];
    expect(rest, "the README has a rule table").toBeDefined();
    const after = (rest as string).slice((rest as string).indexOf("\n\n"));
    const generated = ruleTable();
    if (process.env.UPDATE_README === "1") writeFileSync(path, `${before}${generated}${after}`);
    else
      expect(`${RULE_TABLE_START}${(rest as string).slice(0, (rest as string).indexOf("\n\n"))}`).toBe(
        generated,
      );
  });

  it("each rule is a file of rules/, named by its id, and listed once", () => {
    const files = readdirSync(new URL("./rules/", import.meta.url))
      .filter((name) => name.endsWith(".ts") && name !== "index.ts")
      .map((name) => name.slice(0, -3))
      .sort();
    expect([...lintRules.map((rule) => rule.id)].sort()).toEqual(files);
  });

  it.each(cases)(
    "%s: fires on the unsafe form, not on the safe one",
    async (rule, unsafe, safe, transaction = true, options = {}) => {
      const bad = await lintOne(unsafe, transaction, options);
      expect(rulesOf(bad)).toContain(rule);
      const good = await lintOne(safe, transaction, options);
      expect(rulesOf(good)).not.toContain(rule);
      expect(rulesOf(good)).not.toContain("parse-error");
    },
  );

  it("ban-concurrent-index-creation-in-transaction also covers DROP INDEX and REINDEX", async () => {
    const report = await lintOne("drop index concurrently a_idx;\nreindex (concurrently) index b_idx;");
    expect(report.findings.map((f) => [f.rule, f.line])).toEqual([
      ["ban-concurrent-index-creation-in-transaction", 1],
      ["ban-concurrent-index-creation-in-transaction", 2],
    ]);
  });

  it("constraint-missing-not-valid covers CHECK, and new tables are exempt", async () => {
    expect(rulesOf(await lintOne("alter table accounts add constraint c check (id > 0);"))).toContain(
      "constraint-missing-not-valid",
    );
    const fresh = await lintOne("create table t (id bigint); alter table t add constraint c check (id > 0);");
    expect(fresh.findings).toEqual([]);
  });

  it("adding-field-with-default: constants and stable functions are fine, unknown functions and identities are not", async () => {
    const report = await lintOne(
      [
        "set local lock_timeout = '2s';",
        "alter table accounts add column a bigint default 1 + 2;",
        "alter table accounts add column b jsonb not null default '{}'::jsonb;",
        "alter table accounts add column c timestamptz default current_timestamp;",
        "alter table accounts add column d double precision default random();",
        "alter table accounts add column e bigint generated always as identity;",
      ].join("\n"),
    );
    expect(report.findings.map((f) => [f.rule, f.line])).toEqual([
      ["adding-field-with-default", 5],
      ["adding-field-with-default", 6],
    ]);
  });

  it("adding-serial-primary-key-field covers ADD PRIMARY KEY without USING INDEX", async () => {
    expect(rulesOf(await lintOne("alter table accounts add primary key (id);"))).toContain(
      "adding-serial-primary-key-field",
    );
  });

  it("require-lock-timeout: the migrator's own lock_timeout (ddlLockTimeoutMs, default 5 s) satisfies it", async () => {
    const files = { "1.0.0_one.up.sql": "alter table accounts drop column x;" };
    expect(rulesOf(await lintFiles(files, { ddlLockTimeoutMs: 2000 }))).not.toContain("require-lock-timeout");
    const dir = join(root, String(dirs++));
    mkdirSync(dir);
    writeFileSync(join(dir, "1.0.0_one.up.sql"), files["1.0.0_one.up.sql"]);
    // The defaults: a lock_timeout from the migrator, no statement_timeout.
    expect(rulesOf(await lint(dir))).toEqual(["ban-drop-column", "require-statement-timeout"]);
    await expect(lint(dir, { ddlLockTimeoutMs: -1 })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
  });

  it("require-statement-timeout: the migrator's own statementTimeoutMs satisfies it, 0 does not", async () => {
    const files = { "1.0.0_one.up.sql": "create index concurrently a_idx on accounts (a);" };
    const marked = {
      "1.0.0_one.up.sql": `-- platform-migrate: no-transaction\n${files["1.0.0_one.up.sql"]}`,
    };
    expect(rulesOf(await lintFiles(files, { statementTimeoutMs: 30_000 }))).not.toContain(
      "require-statement-timeout",
    );
    expect(rulesOf(await lintFiles(files, { statementTimeoutMs: 0 }))).toContain("require-statement-timeout");
    expect(
      rulesOf(await lintOne("set statement_timeout = 0;\ncomment on table t is 'x';", true, NO_TIMEOUTS)),
    ).toContain("require-statement-timeout");
    // The migrator sets no timeout on a no-transaction migration, and such a file cannot set one itself.
    expect(rulesOf(await lintFiles(marked, NO_TIMEOUTS))).not.toContain("require-statement-timeout");
    await expect(lintFiles(files, { statementTimeoutMs: 1.5 })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
    });
  });

  it("require-lock-timeout counts every statement that takes a lock, on new tables too", async () => {
    for (const sql of [
      "create type mood as enum ('sad', 'ok');",
      "comment on column t.c is 'an id';",
      "reindex (concurrently false) index i;",
      "vacuum (full false) t;",
      "lock table t in access share mode;",
      "create table t (id bigint);\nalter table t add column c text;",
    ]) {
      expect(rulesOf(await lintOne(sql, true, NO_TIMEOUTS)), sql).toContain("require-lock-timeout");
    }
    expect(rulesOf(await lintOne("select 1;\ninsert into t values (1);", true, NO_TIMEOUTS))).toEqual([]);
    expect(
      rulesOf(await lintOne("set foo.lock_timeout = '1s';\nlock table t;", true, NO_TIMEOUTS)),
    ).toContain("require-lock-timeout");
  });

  it("require-lock-timeout: a zero or reset timeout is none, and no-transaction migrations are exempt", async () => {
    expect(
      rulesOf(await lintOne("set lock_timeout = 0;\nalter table accounts drop column x;", true, NO_TIMEOUTS)),
    ).toContain("require-lock-timeout");
    expect(
      rulesOf(
        await lintOne(
          "set lock_timeout = '1s'; reset lock_timeout;\nalter table accounts drop column x;",
          true,
          NO_TIMEOUTS,
        ),
      ),
    ).toContain("require-lock-timeout");
    expect(rulesOf(await lintOne("drop index accounts_email_idx;", NO_TX, NO_TIMEOUTS))).not.toContain(
      "require-lock-timeout",
    );
  });

  it("identifier-too-long counts UTF-8 bytes, and a long function body is not a name", async () => {
    // 32 × "é" is 32 characters but 64 bytes.
    expect(rulesOf(await lintOne(`create table "${"é".repeat(32)}" (id bigint);`))).toEqual([
      "identifier-too-long",
    ]);
    expect(rulesOf(await lintOne(`create table "${"é".repeat(31)}" (id bigint);`))).toEqual([]);
    const upper = await lintOne(`create table accounts_${"X".repeat(60)} (id bigint);`);
    expect(upper.findings).toMatchObject([{ rule: "identifier-too-long", line: 1, column: 14 }]);
    const quoted = await lintOne(`alter table t add column "${"q".repeat(62)}""x" int;`);
    expect(rulesOf(quoted)).toContain("identifier-too-long");
    const body = `select ${"1 + ".repeat(40)}1`;
    expect(rulesOf(await lintOne(`create function f() returns int language sql as $$ ${body} $$;`))).toEqual(
      [],
    );
  });

  it("CREATE TABLE IF NOT EXISTS may meet an existing table, so it does not make the table new", async () => {
    const report = await lintOne("create table if not exists t (id bigint);\ncreate index t_idx on t (id);");
    expect(rulesOf(report)).toContain("require-concurrent-index-creation");
  });

  it("REINDEX (CONCURRENTLY false) is a plain reindex: fine in a transaction, but not concurrent", async () => {
    const report = await lintOne("reindex (concurrently false) index a_idx;");
    expect(rulesOf(report)).not.toContain("ban-concurrent-index-creation-in-transaction");
    expect(rulesOf(report)).toContain("require-concurrent-reindex");
    expect(rulesOf(await lintOne("reindex (concurrently) index a_idx;"))).toContain(
      "ban-concurrent-index-creation-in-transaction",
    );
  });

  it("adding-not-nullable-field: SET NOT NULL after a validated CHECK (col IS NOT NULL) is fine from PostgreSQL 12", async () => {
    const files = {
      "1.0.0_check.up.sql":
        "alter table accounts add constraint accounts_email_nn check (email is not null) not valid;",
      "1.1.0_validate.up.sql": "alter table accounts validate constraint accounts_email_nn;",
      "1.2.0_set.up.sql": "alter table accounts alter column email set not null;",
    };
    expect(rulesOf(await lintFiles(files))).not.toContain("adding-not-nullable-field");
    expect(rulesOf(await lintFiles(files, { postgresVersion: 11 }))).toContain("adding-not-nullable-field");
    // Not validated, or about another column: the scan stays.
    const { "1.1.0_validate.up.sql": _, ...unvalidated } = files;
    expect(rulesOf(await lintFiles(unvalidated))).toContain("adding-not-nullable-field");
    const other = { ...files, "1.2.0_set.up.sql": "alter table accounts alter column name set not null;" };
    expect(rulesOf(await lintFiles(other))).toContain("adding-not-nullable-field");
  });

  it("constraint-missing-not-valid: VALIDATE in the transaction that added the constraint NOT VALID", async () => {
    const add = "alter table accounts add constraint c check (id > 0) not valid;";
    const validate = "alter table accounts validate constraint c;";
    expect(rulesOf(await lintOne(`${add}\n${validate}`))).toContain("constraint-missing-not-valid");
    const apart = await lintFiles({ "1.0.0_add.up.sql": add, "1.1.0_validate.up.sql": validate });
    expect(rulesOf(apart)).not.toContain("constraint-missing-not-valid");
  });

  it("file-too-large: a file over the bound is refused without being parsed", async () => {
    const big = "select 1;\n".repeat(MAX_LINT_FILE_BYTES / 10 + 1);
    const report = await lintOne(big);
    expect(report.findings).toMatchObject([
      { rule: "file-too-large", severity: "error", line: 1, column: 1 },
    ]);
    expect(report.findings[0]?.message).toContain(String(MAX_LINT_FILE_BYTES));
  });
});

describe("lint positions", () => {
  it("places a finding after multibyte characters at its line and character column", async () => {
    const report = await lintOne("-- héllo wörld 🎉\nselect 'é🎉'; drop table accounts;");
    const drop = report.findings.find((f) => f.rule === "ban-drop-table");
    expect(drop).toMatchObject({ line: 2, column: 14 });
  });

  it("a parse error is a finding with PostgreSQL's message at its position, not a crash", async () => {
    const report = await lintOne("create table t (id bigint);\nselect '🎉é' from where;");
    expect(report.findings).toEqual([
      expect.objectContaining({
        rule: "parse-error",
        severity: "error",
        line: 2,
        column: 18,
        message: 'syntax error at or near "where"',
      }),
    ]);
    expect(report.errors).toBe(1);
  });

  it("a NUL character is a parse error where it is, not the end of the file", async () => {
    const report = await lintOne("select 1;\n  \u0000 drop table accounts;");
    expect(report.findings).toMatchObject([{ rule: "parse-error", line: 2, column: 3 }]);
  });

  it("nesting deeper than the parser's stack is a parse error, not a crash", async () => {
    const report = await lintOne(`select ${"(".repeat(20_000)}1${")".repeat(20_000)};`);
    expect(report.findings).toMatchObject([{ rule: "parse-error", line: 1 }]);
  });

  it("an expression nested as deep as the parser takes is linted, not a stack overflow", async () => {
    const deep = `${"(1 + ".repeat(3000)}1${")".repeat(3000)}`;
    for (const sql of [
      `alter table accounts add column a bigint default ${deep};`,
      `update accounts set a[${deep}] = 1, b = ${deep};`,
      `create view v as select ${deep} as x;`,
    ]) {
      const report = await lintOne(sql);
      expect(rulesOf(report), sql.slice(0, 40)).not.toContain("parse-error");
    }
    // Past the depth it follows, a default counts as possibly volatile.
    expect(rulesOf(await lintOne(`alter table accounts add column a bigint default ${deep};`))).toContain(
      "adding-field-with-default",
    );
  });

  it("an unterminated string is a parse error too", async () => {
    const report = await lintOne("select 1;\nselect 'abc");
    expect(report.findings).toMatchObject([{ rule: "parse-error", line: 2, column: 8 }]);
  });
});

describe("silences", () => {
  it("a silence on the lines before a statement drops that rule's findings there, and only there", async () => {
    const report = await lintOne(
      [
        "set local lock_timeout = '2s';",
        "-- platform-migrate-lint-ignore ban-drop-table, ban-drop-column: archived in 3.1, nothing reads it",
        "/* other comments may sit between */",
        "drop table accounts;",
        "drop table invoices;",
      ].join("\n"),
    );
    expect(report.findings.map((f) => [f.rule, f.line])).toEqual([
      ["unused-silence", 2],
      ["ban-drop-table", 5],
    ]);
    expect(report.findings[0]?.message).toContain("ban-drop-column");
  });

  it("unknown rule ids, unsilenceable rules and a silence after the last statement are invalid", async () => {
    const report = await lintOne(
      [
        "-- platform-migrate-lint-ignore no-such-rule: because",
        "create table t (id bigint);",
        "-- platform-migrate-lint-ignore ban-concurrent-index-creation-in-transaction: I know better",
        "create index concurrently a_idx on accounts (a);",
        "-- platform-migrate-lint-ignore ban-drop-table: trailing",
      ].join("\n"),
    );
    expect(report.findings.map((f) => [f.rule, f.line])).toEqual([
      ["invalid-silence", 1],
      ["invalid-silence", 3],
      ["ban-concurrent-index-creation-in-transaction", 4],
      // CONCURRENTLY commits as it goes, so its rerun needs IF NOT EXISTS even in a transactional file.
      ["prefer-robust-stmts", 4],
      ["invalid-silence", 5],
    ]);
  });

  it("a silence naming a rule's former id still silences it", async () => {
    const report = await lintOne(
      "-- platform-migrate-lint-ignore set-not-null: the table has 12 rows\nalter table accounts alter column email set not null;",
    );
    expect(report.findings).toEqual([]);
    const unused = await lintOne("-- platform-migrate-lint-ignore volatile-default: none here\nselect 1;");
    expect(unused.findings.map((f) => [f.rule, f.message])).toEqual([
      ["unused-silence", "adding-field-with-default does not fire on the statement after this silence"],
    ]);
  });

  it("enable takes only opt-in rule ids, as an array", async () => {
    await expect(lintOne("select 1;", true, { enable: ["ban-drop-table"] })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
    });
    await expect(
      lintOne("select 1;", true, { enable: "require-table-schema" as unknown as [] }),
    ).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await expect(lintOne("select 1;", true, { postgresVersion: 15.5 })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
    });
  });

  it("silences the require-lock-timeout finding placed on the statement that needs the timeout", async () => {
    const report = await lintOne(
      "-- platform-migrate-lint-ignore require-lock-timeout, require-statement-timeout, ban-drop-column: the table is tiny\nalter table accounts drop column x;",
      true,
      NO_TIMEOUTS,
    );
    expect(report.findings).toEqual([]);
  });
});

describe("lint over a directory", () => {
  it("lints the up files in version order; a table from an earlier migration counts as existing", async () => {
    const report = await lintFiles({
      "1.9.0_accounts.up.sql": "create table accounts (id bigint);",
      "1.9.0_accounts.down.sql": "drop table accounts;",
      "1.10.0_index.up.sql": "create index accounts_id_idx on accounts (id);",
      "1.2.0_old.up.sql": "create table old (at timestamp);",
    });
    expect(report.files).toBe(3);
    expect(report.findings.map((f) => [f.version, f.rule])).toEqual([
      ["1.2.0", "prefer-timestamptz"],
      ["1.10.0", "require-concurrent-index-creation"],
    ]);
    expect(report.findings[1]?.file).toMatch(/1\.10\.0_index\.up\.sql$/);
    expect(report).toMatchObject({ errors: 1, warnings: 1 });
  });

  it("startAfter skips the migrations that have shipped", async () => {
    const files = {
      "1.0.0_a.up.sql": "drop table accounts;",
      "1.1.0_b.up.sql": "create table b (id bigint);",
    };
    const report = await lintFiles(files, { startAfter: "1.0.0" });
    expect(report).toMatchObject({ files: 1, findings: [] });
    await expect(lintFiles(files, { startAfter: "latest" })).rejects.toThrow(InvalidVersionError);
  });
});
