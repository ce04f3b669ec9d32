import { defineRule } from "../rule.js";

export default defineRule({
  id: "ban-truncate-cascade",
  severity: "error",
  why: "TRUNCATE ... CASCADE also empties every table with a foreign key to the named ones, and theirs, however far that goes.",
  instead: "TRUNCATE the tables by name, without CASCADE.",
  squawk: "ban-truncate-cascade",
  silenceable: true,
  check(kind, body, { report }) {
    if (kind === "TruncateStmt" && body.behavior === "DROP_CASCADE") report("TRUNCATE ... CASCADE");
  },
});
