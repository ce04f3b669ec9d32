import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("unused-silence", [
  [
    "-- platform-migrate-lint-ignore ban-drop-table: nothing reads it\ncreate table t (id bigint);",
    "-- platform-migrate-lint-ignore ban-drop-table: nothing reads it\ndrop table accounts;",
  ],
]);
