import { defineRule } from "../rule.js";

export default defineRule({
  id: "require-enum-value-ordering",
  severity: "warning",
  why: "ALTER TYPE ... ADD VALUE without BEFORE or AFTER puts the value last, which sorts and compares after every other, often not what ORDER BY and < should mean.",
  instead: "ADD VALUE 'x' BEFORE 'y' (or AFTER 'y').",
  squawk: "require-enum-value-ordering",
  silenceable: true,
  check(kind, body, { report }) {
    if (kind === "AlterEnumStmt" && body.oldVal === undefined && body.newValNeighbor === undefined) {
      report(`ADD VALUE '${String(body.newVal)}' without BEFORE or AFTER`);
    }
  },
});
