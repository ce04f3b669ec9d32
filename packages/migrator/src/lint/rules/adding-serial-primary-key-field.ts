import { field, lastName, location, type Node } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands, columnConstraints, SERIAL_TYPES } from "../syntax.js";

export default defineRule({
  id: "adding-serial-primary-key-field",
  severity: "error",
  why: "Adding a serial column or a PRIMARY KEY to an existing table rewrites it or builds a unique index under an ACCESS EXCLUSIVE lock.",
  instead:
    "CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT ... PRIMARY KEY USING INDEX; prefer identity columns over serial.",
  squawk: "adding-serial-primary-key-field",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    const table = tableKey(body.relation);
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype === "AT_AddColumn") {
        const column = field(cmd.def, "ColumnDef") as Node | undefined;
        const name = `${table}.${String(column?.colname)}`;
        const type = lastName(field(column?.typeName, "names"));
        if (SERIAL_TYPES.has(type))
          report(`ADD COLUMN ${name} ${type} on an existing table rewrites it`, location(column));
        if (columnConstraints(column).some((c) => c.contype === "CONSTR_PRIMARY")) {
          report(`ADD COLUMN ${name} PRIMARY KEY builds its index under an exclusive lock`, location(column));
        }
      } else if (cmd.subtype === "AT_AddConstraint") {
        const constraint = field(cmd.def, "Constraint") as Node | undefined;
        if (constraint?.contype === "CONSTR_PRIMARY" && constraint.indexname === undefined) {
          report(`ADD PRIMARY KEY on the existing table ${table} without USING INDEX`, location(constraint));
        }
      }
    }
  },
});
