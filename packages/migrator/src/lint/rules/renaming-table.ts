import { location } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";

export default defineRule({
  id: "renaming-table",
  severity: "warning",
  why: "Renaming a table breaks the code still running against the old name.",
  instead: "Create the new table (or a view with the new name), move the code over, then drop the old one.",
  squawk: "renaming-table",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (kind === "RenameStmt" && body.renameType === "OBJECT_TABLE" && state.existing(body.relation)) {
      report(
        `RENAME of the table ${tableKey(body.relation)}: code still running uses the old name`,
        location(body.relation),
      );
    }
  },
});
