import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("require-enum-value-ordering", [
  ["alter type plan add value 'team';", "alter type plan add value 'team' after 'pro';"],
]);
