import { describe, expect, it } from "vitest";
import { describeRuleCases, lintFiles, rulesOf } from "../rule-testing.js";

describeRuleCases("adding-not-nullable-field", [
  [
    "alter table accounts alter column email set not null;",
    "create table t (email text); alter table t alter column email set not null;",
  ],
]);

describe("adding-not-nullable-field", () => {
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
});
