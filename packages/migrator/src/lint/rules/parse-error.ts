import { defineRule } from "../rule.js";

// Reported by the linter itself (lint.ts), not by a check of a statement.
export default defineRule({
  id: "parse-error",
  severity: "error",
  why: "PostgreSQL's parser rejects the file: the migration would fail at run time.",
  instead: "Fix the syntax at the position given (PostgreSQL's own message).",
  silenceable: false,
});
