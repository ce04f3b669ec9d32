import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("prefer-robust-stmts", [
  [
    "create index concurrently accounts_email_idx on accounts (email);",
    "create index concurrently if not exists accounts_email_idx on accounts (email);",
    NO_TX,
  ],
]);
