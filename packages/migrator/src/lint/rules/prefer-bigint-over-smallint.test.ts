import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("prefer-bigint-over-smallint", [
  ["create table t (rank smallint);", "create table t (rank bigint);"],
]);
