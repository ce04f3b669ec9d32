import { describe, expect, it } from "vitest";
import { describeRuleCases, lintOne, rulesOf } from "../rule-testing.js";

describeRuleCases("adding-serial-primary-key-field", [
  [
    "alter table accounts add column id bigserial;",
    "alter table accounts add constraint accounts_pkey primary key using index accounts_id_idx;",
  ],
]);

describe("adding-serial-primary-key-field", () => {
  it("adding-serial-primary-key-field covers ADD PRIMARY KEY without USING INDEX", async () => {
    expect(rulesOf(await lintOne("alter table accounts add primary key (id);"))).toContain(
      "adding-serial-primary-key-field",
    );
  });
});
