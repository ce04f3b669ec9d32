import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-create-domain-with-constraint", [
  ["create domain email as text check (value like '%@%');", "create domain email as text;"],
]);
