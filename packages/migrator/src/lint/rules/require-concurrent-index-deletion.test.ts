import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("require-concurrent-index-deletion", [
  ["drop index accounts_email_idx;", "drop index concurrently accounts_email_idx;", NO_TX],
]);
