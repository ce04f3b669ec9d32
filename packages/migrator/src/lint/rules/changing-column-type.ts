import { field, location } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands } from "../syntax.js";

export default defineRule({
  id: "changing-column-type",
  severity: "error",
  why: "ALTER COLUMN ... TYPE on an existing table usually rewrites the table and its indexes under an ACCESS EXCLUSIVE lock.",
  instead:
    "Add a new column, backfill it in batches, switch the code over, then drop the old column; silence with a reason for binary-compatible changes (e.g. widening varchar).",
  squawk: "changing-column-type",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype === "AT_AlterColumnType") {
        report(
          `ALTER COLUMN ${String(cmd.name)} TYPE on the existing table ${tableKey(body.relation)}`,
          location(field(cmd.def, "ColumnDef")),
        );
      }
    }
  },
});
