import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("transaction-nesting", [
  [
    "begin; create table t (id bigint); commit;",
    "savepoint s; create table t (id bigint); release savepoint s;",
  ],
]);
