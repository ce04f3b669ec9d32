import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("disallowed-unique-constraint", [
  [
    "alter table accounts add constraint accounts_email_key unique (email);",
    "alter table accounts add constraint accounts_email_key unique using index accounts_email_idx;",
  ],
]);
