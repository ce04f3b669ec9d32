import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("invalid-silence", [
  [
    "-- platform-migrate-lint-ignore ban-drop-table\ndrop table accounts;",
    "-- platform-migrate-lint-ignore ban-drop-table: nothing has read it since 2.0\ndrop table accounts;",
  ],
]);
