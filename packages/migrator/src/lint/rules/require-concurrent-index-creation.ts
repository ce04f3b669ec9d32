import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";

export default defineRule({
  id: "require-concurrent-index-creation",
  severity: "error",
  why: "CREATE INDEX without CONCURRENTLY on a table that existed before the migration blocks its writes for the whole build.",
  instead:
    "CREATE INDEX CONCURRENTLY in a migration of its own marked `-- platform-migrate: no-transaction`.",
  squawk: "require-concurrent-index-creation",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (kind === "IndexStmt" && !body.concurrent && state.existing(body.relation)) {
      report(`CREATE INDEX on the existing table ${tableKey(body.relation)} without CONCURRENTLY`);
    }
  },
});
