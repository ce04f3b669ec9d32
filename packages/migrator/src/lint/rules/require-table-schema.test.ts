import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("require-table-schema", [
  [
    "create table t (id bigint);",
    "create table public.t (id bigint);",
    true,
    { enable: ["require-table-schema"] },
  ],
]);
