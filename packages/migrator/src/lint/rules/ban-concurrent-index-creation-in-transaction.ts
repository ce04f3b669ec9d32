import { option } from "../ast.js";
import { defineRule } from "../rule.js";
import { alterTableCommands } from "../syntax.js";

export default defineRule({
  id: "ban-concurrent-index-creation-in-transaction",
  severity: "error",
  why: "CONCURRENTLY (index create, drop, reindex; partition detach) cannot run inside a transaction block: the migration fails at run time.",
  instead:
    "Move the statement to a migration of its own whose first line is `-- platform-migrate: no-transaction`.",
  squawk: "ban-concurrent-index-creation-in-transaction",
  silenceable: false,
  aliases: ["concurrently-in-transaction"],
  check(kind, body, { state, report }) {
    if (!state.inTransaction) return;
    const what =
      kind === "IndexStmt" && body.concurrent
        ? "CREATE INDEX"
        : kind === "DropStmt" && body.removeType === "OBJECT_INDEX" && body.concurrent
          ? "DROP INDEX"
          : kind === "ReindexStmt" && option(body.params, "concurrently") === "on"
            ? "REINDEX"
            : alterTableCommands(kind, body).some(
                  (cmd) =>
                    cmd.subtype === "AT_DetachPartition" &&
                    (cmd.def as { PartitionCmd?: { concurrent?: boolean } })?.PartitionCmd?.concurrent,
                )
              ? "DETACH PARTITION"
              : undefined;
    if (what) report(`${what} CONCURRENTLY in a migration that runs in a transaction`);
  },
});
