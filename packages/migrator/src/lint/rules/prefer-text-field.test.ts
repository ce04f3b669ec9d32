import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("prefer-text-field", [
  ["create table t (name varchar(100));", "create table t (name text);"],
]);
