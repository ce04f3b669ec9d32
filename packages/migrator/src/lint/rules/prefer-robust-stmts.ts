import { field, type Node } from "../ast.js";
import { defineRule } from "../rule.js";
import { alterTableCommands } from "../syntax.js";

const ID = "prefer-robust-stmts";
const RERUN =
  "a statement outside a transaction without IF [NOT] EXISTS cannot be rerun after a failure part way";

// Each such ALTER TABLE subcommand is safe to repeat when it says IF [NOT] EXISTS.
const GUARDED = new Set(["AT_AddColumn", "AT_DropColumn", "AT_DropConstraint"]);

export default defineRule({
  id: ID,
  severity: "warning",
  why: "A statement that runs outside a transaction (a no-transaction migration) stays applied when a later one fails, and the rerun then fails on it unless it is idempotent.",
  instead:
    "IF NOT EXISTS / IF EXISTS on CREATE and DROP (CREATE INDEX CONCURRENTLY IF NOT EXISTS, DROP INDEX CONCURRENTLY IF EXISTS), or a transactional migration.",
  squawk: ID,
  silenceable: true,
  check(kind, body, { state, report }) {
    // Constraint names dropped (true) or dropped and added again (false) earlier in the file.
    const dropped = (state.scratch.get(ID) as Map<string, boolean> | undefined) ?? new Map<string, boolean>();
    state.scratch.set(ID, dropped);
    const outside = !state.inTransaction;
    for (const cmd of alterTableCommands(kind, body)) {
      const constraint = field(cmd.def, "Constraint") as Node | undefined;
      if (cmd.subtype === "AT_DropConstraint") dropped.set(String(cmd.name), true);
      if (GUARDED.has(String(cmd.subtype)) && cmd.missing_ok) continue;
      if (cmd.subtype === "AT_ValidateConstraint" && dropped.has(String(cmd.name))) continue;
      if (cmd.subtype === "AT_AddConstraint" && dropped.get(String(constraint?.conname)) === true) {
        dropped.set(String(constraint?.conname), false);
        continue;
      }
      if (outside) report(RERUN);
    }
    switch (kind) {
      case "IndexStmt":
        if (!body.if_not_exists && body.idxname !== undefined && (body.concurrent || outside)) report(RERUN);
        break;
      case "CreateStmt": {
        const dropsItself =
          field(body.relation, "relpersistence") === "t" && body.oncommit === "ONCOMMIT_DROP";
        if (!body.if_not_exists && outside && !dropsItself) report(RERUN);
        break;
      }
      case "DropStmt":
        if (
          ["OBJECT_INDEX", "OBJECT_TABLE", "OBJECT_TYPE"].includes(String(body.removeType)) &&
          !body.missing_ok &&
          outside
        ) {
          report(RERUN);
        }
        break;
    }
  },
});
