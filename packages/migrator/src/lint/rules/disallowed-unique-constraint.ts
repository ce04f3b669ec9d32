import { field, location, type Node } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands, columnConstraints } from "../syntax.js";

export default defineRule({
  id: "disallowed-unique-constraint",
  severity: "error",
  why: "ADD UNIQUE on an existing table builds its index under an ACCESS EXCLUSIVE lock, blocking reads and writes.",
  instead: "CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT ... UNIQUE USING INDEX.",
  squawk: "disallowed-unique-constraint",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    const table = tableKey(body.relation);
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype === "AT_AddColumn") {
        const column = field(cmd.def, "ColumnDef") as Node | undefined;
        if (columnConstraints(column).some((c) => c.contype === "CONSTR_UNIQUE")) {
          report(
            `ADD COLUMN ${table}.${String(column?.colname)} UNIQUE builds its index under an exclusive lock`,
            location(column),
          );
        }
      } else if (cmd.subtype === "AT_AddConstraint") {
        const constraint = field(cmd.def, "Constraint") as Node | undefined;
        if (constraint?.contype === "CONSTR_UNIQUE" && constraint.indexname === undefined) {
          const name = typeof constraint.conname === "string" ? ` ${constraint.conname}` : "";
          report(
            `ADD CONSTRAINT${name} UNIQUE on the existing table ${table} without USING INDEX`,
            location(constraint),
          );
        }
      }
    }
  },
});
