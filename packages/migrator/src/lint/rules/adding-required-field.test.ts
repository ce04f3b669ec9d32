import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("adding-required-field", [
  [
    "alter table accounts add column plan text not null;",
    "alter table accounts add column plan text not null default 'free';",
  ],
]);
