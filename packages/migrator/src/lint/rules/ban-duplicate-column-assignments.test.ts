import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-duplicate-column-assignments", [
  [
    "update accounts set tags[1] = 'a', tags[1] = 'b';",
    "update accounts set tags[1] = 'a', tags[2] = 'b', tags[i] = 'c', tags[i] = 'd';",
  ],
  ["update accounts set plan = 'free', plan = 'paid';", "update accounts set plan = 'free', note = 'paid';"],
]);
