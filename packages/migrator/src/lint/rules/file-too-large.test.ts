import { describe, expect, it } from "vitest";
import { MAX_LINT_FILE_BYTES } from "../lint.js";
import { lintOne, rulesOf } from "../rule-testing.js";

describe("file-too-large", () => {
  it("file-too-large: a file over the bound is refused without being parsed", async () => {
    const big = "select 1;\n".repeat(MAX_LINT_FILE_BYTES / 10 + 1);
    const report = await lintOne(big);
    expect(report.findings).toMatchObject([
      { rule: "file-too-large", severity: "error", line: 1, column: 1 },
    ]);
    expect(report.findings[0]?.message).toContain(String(MAX_LINT_FILE_BYTES));
  });

  it("a file just within the bound is parsed and linted", async () => {
    // One long comment: just under the bound, and cheap to parse.
    const report = await lintOne(`-- ${"x".repeat(MAX_LINT_FILE_BYTES - 100)}\nselect 1;`);
    expect(rulesOf(report)).not.toContain("file-too-large");
    expect(rulesOf(await lintOne("drop table accounts;"))).toEqual(["ban-drop-table"]);
  });
});
