import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("require-concurrent-index-creation", [
  [
    "create index accounts_email_idx on accounts (email);",
    "create table t (id bigint); create index t_id_idx on t (id);",
  ],
]);
