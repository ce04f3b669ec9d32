import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("prefer-timestamptz", [
  ["create table t (at timestamp);", "create table t (at timestamptz);"],
]);
