import { defineRule } from "../rule.js";
import { possiblySlow } from "../timeouts.js";

export default defineRule({
  id: "require-statement-timeout",
  severity: "warning",
  why: "A slow statement (a table rewrite, an index build, a scan) without a statement_timeout holds its locks for as long as it runs, with no bound.",
  instead:
    "Set the migrator's `statementTimeoutMs`, or SET statement_timeout = '5s'; before the first such statement.",
  squawk: "require-statement-timeout",
  silenceable: true,
  check(kind, _body, { state, report }) {
    if (
      !possiblySlow(kind) ||
      state.statementTimeout ||
      !state.transactional ||
      state.reported.has("statement")
    )
      return;
    state.reported.add("statement");
    report("this statement may run long, and no statement_timeout is set before it");
  },
});
