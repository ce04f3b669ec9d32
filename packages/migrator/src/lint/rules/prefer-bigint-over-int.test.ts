import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("prefer-bigint-over-int", [
  ["create table t (id integer);", "create table t (id bigint);"],
]);
