import { option } from "../ast.js";
import { defineRule } from "../rule.js";

export default defineRule({
  id: "prefer-repack",
  severity: "warning",
  why: "CLUSTER and VACUUM FULL rewrite the table under an ACCESS EXCLUSIVE lock, blocking reads and writes; PostgreSQL 19's REPACK (CONCURRENTLY) does not (checked when `postgresVersion` is 19 or more).",
  instead: "REPACK (CONCURRENTLY) the table.",
  squawk: "prefer-repack",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (state.settings.postgresVersion < 19) return;
    if (kind === "ClusterStmt") report("CLUSTER rewrites the table under an ACCESS EXCLUSIVE lock");
    if (kind === "VacuumStmt" && option(body.options, "full") === "on") {
      report("VACUUM FULL rewrites the table under an ACCESS EXCLUSIVE lock");
    }
  },
});
