import { option } from "../ast.js";
import { defineRule } from "../rule.js";

export default defineRule({
  id: "require-concurrent-reindex",
  severity: "error",
  why: "REINDEX without CONCURRENTLY blocks writes to the table (and reads that use the index) for the whole rebuild.",
  instead: "REINDEX ... CONCURRENTLY in a migration of its own marked `-- platform-migrate: no-transaction`.",
  squawk: "require-concurrent-reindex",
  silenceable: true,
  check(kind, body, { report }) {
    // System catalogs cannot be reindexed concurrently.
    if (
      kind === "ReindexStmt" &&
      body.kind !== "REINDEX_OBJECT_SYSTEM" &&
      option(body.params, "concurrently") !== "on"
    ) {
      report("REINDEX without CONCURRENTLY");
    }
  },
});
