import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InvalidVersionError } from "../errors.js";
import { lintFiles, lintOne, NO_TIMEOUTS, rulesOf } from "./rule-testing.js";
import { lintRules } from "./rules.js";

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

describe("lint rules", () => {
  it("every rule has its tests beside it (rules/<id>.test.ts)", () => {
    const tests = readdirSync(new URL("./rules/", import.meta.url)).filter((name) =>
      name.endsWith(".test.ts"),
    );
    expect(lintRules.map((rule) => `${rule.id}.test.ts`).filter((file) => !tests.includes(file))).toEqual([]);
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
      .filter((name) => name.endsWith(".ts") && name !== "index.ts" && !name.endsWith(".test.ts"))
      .map((name) => name.slice(0, -3))
      .sort();
    expect([...lintRules.map((rule) => rule.id)].sort()).toEqual(files);
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
