import { defineRule } from "../rule.js";

// Reported by the linter itself (lint.ts), not by a check of a statement.
export default defineRule({
  id: "unused-silence",
  severity: "warning",
  why: "A silence whose rule does not fire on the statement after it hides nothing today but would hide a future finding.",
  instead: "Remove it.",
  silenceable: false,
});
