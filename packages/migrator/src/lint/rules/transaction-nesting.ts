import { defineRule } from "../rule.js";

const OPENS = new Set(["TRANS_STMT_BEGIN", "TRANS_STMT_START"]);
const CLOSES = new Set([
  "TRANS_STMT_COMMIT",
  "TRANS_STMT_ROLLBACK",
  "TRANS_STMT_PREPARE",
  "TRANS_STMT_COMMIT_PREPARED",
  "TRANS_STMT_ROLLBACK_PREPARED",
]);

export default defineRule({
  id: "transaction-nesting",
  severity: "error",
  why: "BEGIN, COMMIT or ROLLBACK in a migration the migrator runs in a transaction breaks that transaction: the run is no longer all or nothing, and its history row may not match what was applied. In a no-transaction migration, a BEGIN inside an open transaction or a COMMIT outside one is a mistake too.",
  instead: "Leave transactions to the migrator; split the work into migrations, or mark one no-transaction.",
  squawk: "transaction-nesting",
  silenceable: false,
  check(kind, body, { state, report }) {
    if (kind !== "TransactionStmt") return;
    const what = String(body.kind).replace("TRANS_STMT_", "").replace("_", " ");
    const opens = OPENS.has(String(body.kind));
    if (!opens && !CLOSES.has(String(body.kind))) return;
    if (state.transactional) report(`${what} in a migration that runs in a transaction`);
    else if (opens && state.inTransaction) report(`${what} inside a transaction the file already began`);
    else if (!opens && !state.inTransaction) report(`${what} without a transaction to end`);
  },
});
