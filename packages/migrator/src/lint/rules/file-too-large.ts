import { defineRule } from "../rule.js";

// Reported by the linter itself (lint.ts), not by a check of a statement.
export default defineRule({
  id: "file-too-large",
  severity: "error",
  why: "The file is larger than the linter reads (see the message); huge migrations are usually data loads that belong elsewhere.",
  instead: "Split the file, or load the data with COPY outside the migrations.",
  silenceable: false,
});
