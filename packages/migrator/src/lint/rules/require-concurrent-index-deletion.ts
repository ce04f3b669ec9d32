import { defineRule } from "../rule.js";

export default defineRule({
  id: "require-concurrent-index-deletion",
  severity: "warning",
  why: "DROP INDEX without CONCURRENTLY takes an ACCESS EXCLUSIVE lock on the index's table.",
  instead: "DROP INDEX CONCURRENTLY in a migration of its own marked `-- platform-migrate: no-transaction`.",
  squawk: "require-concurrent-index-deletion",
  silenceable: true,
  check(kind, body, { report }) {
    if (kind === "DropStmt" && body.removeType === "OBJECT_INDEX" && !body.concurrent) {
      report("DROP INDEX without CONCURRENTLY");
    }
  },
});
