import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("renaming-table", [
  [
    "alter table accounts rename to users;",
    "create table t (id bigint); alter table t rename to t2; create index t2_idx on t2 (id);",
  ],
]);
