import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-drop-not-null", [
  [
    "alter table accounts alter column email drop not null;",
    "alter table accounts alter column email set default '';",
  ],
]);
