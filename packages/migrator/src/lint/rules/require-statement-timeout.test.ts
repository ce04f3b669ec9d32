import { describe, expect, it } from "vitest";
import { describeRuleCases, lintFiles, lintOne, NO_TIMEOUTS, rulesOf } from "../rule-testing.js";

describeRuleCases("require-statement-timeout", [
  [
    "comment on table accounts is 'who pays';",
    "set local statement_timeout = '5s';\ncomment on table accounts is 'who pays';",
    true,
    NO_TIMEOUTS,
  ],
]);

describe("require-statement-timeout", () => {
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
});
