import { location } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";

export default defineRule({
  id: "renaming-column",
  severity: "warning",
  why: "Renaming a column breaks the code still running against the old name.",
  instead: "Add the new column, write both, backfill, move the reads, then drop the old column.",
  squawk: "renaming-column",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (
      kind === "RenameStmt" &&
      body.renameType === "OBJECT_COLUMN" &&
      body.relationType === "OBJECT_TABLE" &&
      state.existing(body.relation)
    ) {
      report(
        `RENAME of the column ${tableKey(body.relation)}.${String(body.subname)}: code still running uses the old name`,
        location(body.relation),
      );
    }
  },
});
