import { describe, expect, it } from "vitest";
import { describeRuleCases, lintFiles, lintOne, rulesOf } from "../rule-testing.js";

describeRuleCases("constraint-missing-not-valid", [
  [
    "alter table accounts add constraint accounts_owner_fk foreign key (owner) references users (id);",
    "alter table accounts add constraint accounts_owner_fk foreign key (owner) references users (id) not valid;",
  ],
]);

describe("constraint-missing-not-valid", () => {
  it("constraint-missing-not-valid covers CHECK, and new tables are exempt", async () => {
    expect(rulesOf(await lintOne("alter table accounts add constraint c check (id > 0);"))).toContain(
      "constraint-missing-not-valid",
    );
    const fresh = await lintOne("create table t (id bigint); alter table t add constraint c check (id > 0);");
    expect(fresh.findings).toEqual([]);
  });
  it("constraint-missing-not-valid: VALIDATE in the transaction that added the constraint NOT VALID", async () => {
    const add = "alter table accounts add constraint c check (id > 0) not valid;";
    const validate = "alter table accounts validate constraint c;";
    expect(rulesOf(await lintOne(`${add}\n${validate}`))).toContain("constraint-missing-not-valid");
    const apart = await lintFiles({ "1.0.0_add.up.sql": add, "1.1.0_validate.up.sql": validate });
    expect(rulesOf(apart)).not.toContain("constraint-missing-not-valid");
  });
});
