import { defineRule } from "../rule.js";

export default defineRule({
  id: "ban-alter-domain-with-add-constraint",
  severity: "error",
  why: "ALTER DOMAIN ... ADD CONSTRAINT checks every column of that type in every table while blocking their writes.",
  instead: "CHECK constraints on the tables' columns, added NOT VALID and validated in a later migration.",
  squawk: "ban-alter-domain-with-add-constraint",
  silenceable: true,
  check(kind, body, { report }) {
    if (kind === "AlterDomainStmt" && body.subtype === "C") report("ALTER DOMAIN ... ADD CONSTRAINT");
  },
});
