import { field, location, type Node } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands, columnConstraints } from "../syntax.js";

export default defineRule({
  id: "adding-foreign-key-constraint",
  severity: "error",
  why: "A validated FOREIGN KEY added to an existing table scans it under a SHARE ROW EXCLUSIVE lock on both tables, blocking their writes.",
  instead: "ADD CONSTRAINT ... FOREIGN KEY ... NOT VALID, then VALIDATE CONSTRAINT in a later migration.",
  squawk: "adding-foreign-key-constraint",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    const table = tableKey(body.relation);
    for (const cmd of alterTableCommands(kind, body)) {
      const constraints =
        cmd.subtype === "AT_AddConstraint"
          ? [field(cmd.def, "Constraint") as Node | undefined]
          : cmd.subtype === "AT_AddColumn"
            ? columnConstraints(field(cmd.def, "ColumnDef") as Node | undefined)
            : [];
      for (const constraint of constraints) {
        if (constraint?.contype === "CONSTR_FOREIGN" && !constraint.skip_validation) {
          report(
            `a FOREIGN KEY on the existing table ${table} validated while it blocks writes`,
            location(constraint),
          );
        }
      }
    }
  },
});
