import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands } from "../syntax.js";

export default defineRule({
  id: "ban-drop-not-null",
  severity: "warning",
  why: "DROP NOT NULL lets the new code write NULLs that the code still running during a rolling deploy does not expect.",
  instead: "Make the readers handle NULL in a release first; drop the constraint in a later one.",
  squawk: "ban-drop-not-null",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype === "AT_DropNotNull") {
        report(
          `DROP NOT NULL on ${tableKey(body.relation)}.${String(cmd.name)}: code still running may not expect NULL`,
        );
      }
    }
  },
});
