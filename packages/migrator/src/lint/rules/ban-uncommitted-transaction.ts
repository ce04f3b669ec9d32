import { defineRule } from "../rule.js";

export default defineRule({
  id: "ban-uncommitted-transaction",
  severity: "error",
  why: "A BEGIN with no COMMIT after it leaves the file's changes to whatever ends the session: a rollback when it closes.",
  instead: "End the transaction the file begins with COMMIT (or leave transactions to the migrator).",
  squawk: "ban-uncommitted-transaction",
  silenceable: false,
  end({ state, report }) {
    if (state.openedByFile !== undefined) report("a BEGIN without a COMMIT after it", state.openedByFile);
  },
});
