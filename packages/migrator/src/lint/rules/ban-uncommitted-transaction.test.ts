import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("ban-uncommitted-transaction", [
  ["begin;\nselect 1;", "begin;\nselect 1;\ncommit;", NO_TX],
]);
