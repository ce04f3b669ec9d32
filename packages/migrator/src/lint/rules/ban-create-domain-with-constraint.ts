import { list } from "../ast.js";
import { defineRule } from "../rule.js";

export default defineRule({
  id: "ban-create-domain-with-constraint",
  severity: "warning",
  why: "A domain's constraint cannot be changed later without ALTER DOMAIN ... ADD CONSTRAINT, which checks every column of that type in every table while blocking their writes.",
  instead: "A plain domain, with CHECK constraints on the tables' columns.",
  squawk: "ban-create-domain-with-constraint",
  silenceable: true,
  check(kind, body, { report }) {
    if (kind === "CreateDomainStmt" && list(body.constraints).length > 0)
      report("CREATE DOMAIN with a constraint");
  },
});
