import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("require-concurrent-partition-detach", [
  [
    "alter table events detach partition events_2020;",
    "alter table events detach partition events_2020 concurrently;",
    NO_TX,
  ],
]);
