import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("no-transaction-single-statement", [
  [
    "create index concurrently a_idx on accounts (a); create index concurrently b_idx on accounts (b);",
    "create index concurrently a_idx on accounts (a);",
    NO_TX,
  ],
]);
