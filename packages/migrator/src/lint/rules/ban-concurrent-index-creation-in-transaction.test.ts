import { describe, expect, it } from "vitest";
import { describeRuleCases, lintOne } from "../rule-testing.js";

describeRuleCases("ban-concurrent-index-creation-in-transaction", [
  [
    "create index concurrently accounts_email_idx on accounts (email);",
    "create index accounts_email_idx on accounts (email);",
  ],
]);

describe("ban-concurrent-index-creation-in-transaction", () => {
  it("ban-concurrent-index-creation-in-transaction also covers DROP INDEX and REINDEX", async () => {
    const report = await lintOne("drop index concurrently a_idx;\nreindex (concurrently) index b_idx;");
    expect(report.findings.map((f) => [f.rule, f.line])).toEqual([
      ["ban-concurrent-index-creation-in-transaction", 1],
      ["ban-concurrent-index-creation-in-transaction", 2],
    ]);
  });
});
