import { field, lastName, location, type Node } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands, columnConstraints, SERIAL_TYPES } from "../syntax.js";

// Constraints that give every existing row a value.
const FILLED = new Set(["CONSTR_DEFAULT", "CONSTR_IDENTITY", "CONSTR_GENERATED"]);

export default defineRule({
  id: "adding-required-field",
  severity: "error",
  why: "ADD COLUMN ... NOT NULL without a DEFAULT fails on a table that has rows.",
  instead: "Add the column with a constant DEFAULT, or nullable and backfill, then add NOT NULL as above.",
  squawk: "adding-required-field",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype !== "AT_AddColumn") continue;
      const column = field(cmd.def, "ColumnDef") as Node | undefined;
      const types = columnConstraints(column).map((constraint) => String(constraint.contype));
      const serial = SERIAL_TYPES.has(lastName(field(column?.typeName, "names")));
      if (types.includes("CONSTR_NOTNULL") && !serial && !types.some((type) => FILLED.has(type))) {
        report(
          `ADD COLUMN ${tableKey(body.relation)}.${String(column?.colname)} NOT NULL without a DEFAULT fails on a table with rows`,
          location(column),
        );
      }
    }
  },
});
