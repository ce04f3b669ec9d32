import { defineRule } from "../rule.js";
import { type FileState, tableKey } from "../state.js";
import { alterTableCommands } from "../syntax.js";

/**
 * PostgreSQL 12+ skips SET NOT NULL's scan when a validated CHECK (col IS NOT NULL) holds. A constraint this
 * linter saw added must be exactly that; one added outside the linted files is judged by its name.
 */
function provenNotNull(state: FileState, table: string, column: string): boolean {
  if (state.settings.postgresVersion < 12) return false;
  for (const name of state.directory.validated) {
    const check = state.directory.checks.get(name);
    if (check ? check.table === table && check.notNullColumn === column : name.split("_").includes(column)) {
      return true;
    }
  }
  return false;
}

export default defineRule({
  id: "adding-not-nullable-field",
  severity: "error",
  why: "SET NOT NULL on an existing column scans the whole table under an ACCESS EXCLUSIVE lock, unless (PostgreSQL 12+) a validated CHECK (col IS NOT NULL) already proves it.",
  instead:
    "ADD CONSTRAINT ... CHECK (col IS NOT NULL) NOT VALID, VALIDATE it in a later migration, then SET NOT NULL (PostgreSQL 12+ uses the constraint and skips the scan).",
  squawk: "adding-not-nullable-field",
  silenceable: true,
  aliases: ["set-not-null"],
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    const table = tableKey(body.relation);
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype === "AT_SetNotNull" && !provenNotNull(state, table, String(cmd.name))) {
        report(
          `SET NOT NULL on the existing column ${table}.${String(cmd.name)} without a validated CHECK (${String(cmd.name)} IS NOT NULL)`,
        );
      }
    }
  },
});
