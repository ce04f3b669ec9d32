import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("renaming-column", [
  [
    "alter table accounts rename column email to mail;",
    "create table t (email text); alter table t rename column email to mail;",
  ],
]);
