import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-drop-column", [
  [
    "alter table accounts drop column email;",
    "create table t (id bigint, email text); alter table t drop column email;",
  ],
]);
