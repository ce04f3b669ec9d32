import { defineRule } from "../rule.js";

// Reported by the linter itself (lint.ts), not by a check of a statement.
export default defineRule({
  id: "invalid-silence",
  severity: "error",
  why: "A silence comment without a reason, with an unknown or unsilenceable rule id, or with no statement after it silences nothing that a reviewer can check.",
  instead:
    "`-- platform-migrate-lint-ignore <rule-id>[, <rule-id>]: <reason>` on a line right before the statement.",
  silenceable: false,
});
