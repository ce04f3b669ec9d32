import { field, location, type Node } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands, columnConstraints } from "../syntax.js";

const VALIDATED = new Set(["CONSTR_CHECK", "CONSTR_FOREIGN"]);
const label = (constraint: Node) => (constraint.contype === "CONSTR_CHECK" ? "CHECK" : "FOREIGN KEY");

export default defineRule({
  id: "constraint-missing-not-valid",
  severity: "error",
  why: "ADD CONSTRAINT (CHECK, FOREIGN KEY) on an existing table validates every row while holding a lock that blocks writes (and, for a foreign key, writes to the referenced table); VALIDATE CONSTRAINT in the same transaction as the NOT VALID add keeps that lock for the whole scan.",
  instead:
    "ADD CONSTRAINT ... NOT VALID, then VALIDATE CONSTRAINT in a later migration (it takes a lighter lock).",
  squawk: "constraint-missing-not-valid",
  silenceable: true,
  check(kind, body, { state, report }) {
    const table = tableKey(body.relation);
    const existing = state.existing(body.relation);
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype === "AT_ValidateConstraint" && state.notValidInTransaction.has(String(cmd.name))) {
        report(
          `VALIDATE CONSTRAINT ${String(cmd.name)} in the transaction that added it NOT VALID blocks writes for the whole scan`,
        );
      }
      if (!existing) continue;
      if (cmd.subtype === "AT_AddConstraint") {
        const constraint = field(cmd.def, "Constraint") as Node | undefined;
        if (constraint && VALIDATED.has(String(constraint.contype)) && !constraint.skip_validation) {
          const name = typeof constraint.conname === "string" ? ` ${constraint.conname}` : "";
          report(
            `ADD CONSTRAINT${name} ${label(constraint)} on the existing table ${table} without NOT VALID`,
            location(constraint),
          );
        }
      } else if (cmd.subtype === "AT_AddColumn") {
        const column = field(cmd.def, "ColumnDef") as Node | undefined;
        for (const constraint of columnConstraints(column)) {
          if (VALIDATED.has(String(constraint.contype)) && !constraint.skip_validation) {
            report(
              `ADD COLUMN ${table}.${String(column?.colname)} with a ${label(constraint)} constraint validates every row`,
              location(constraint),
            );
          }
        }
      }
    }
  },
});
