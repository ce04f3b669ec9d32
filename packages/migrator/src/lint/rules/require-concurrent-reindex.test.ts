import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("require-concurrent-reindex", [
  ["reindex index accounts_email_idx;", "reindex index concurrently accounts_email_idx;", NO_TX],
]);
