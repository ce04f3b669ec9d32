import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("prefer-repack", [
  ["vacuum full accounts;", "vacuum accounts;", NO_TX, { postgresVersion: 19 }],
]);
