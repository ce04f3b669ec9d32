import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-alter-domain-with-add-constraint", [
  [
    "alter domain email add constraint has_at check (value like '%@%');",
    "alter domain email drop constraint has_at;",
  ],
]);
