import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("changing-column-type", [
  [
    "alter table accounts alter column id type bigint;",
    "create table t (id bigint); alter table t alter column id type bigint;",
  ],
]);
