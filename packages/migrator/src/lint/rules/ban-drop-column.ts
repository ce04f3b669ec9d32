import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands } from "../syntax.js";

export default defineRule({
  id: "ban-drop-column",
  severity: "warning",
  why: "Dropping a column breaks the code still running against it during a rolling deploy, and loses its data.",
  instead: "Stop using the column in a release first; drop it in a later one.",
  squawk: "ban-drop-column",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype === "AT_DropColumn") {
        report(`DROP COLUMN ${tableKey(body.relation)}.${String(cmd.name)}: code still running may use it`);
      }
    }
  },
});
