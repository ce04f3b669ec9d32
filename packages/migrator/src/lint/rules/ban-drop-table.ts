import { field, list, strings } from "../ast.js";
import { defineRule } from "../rule.js";

export default defineRule({
  id: "ban-drop-table",
  severity: "warning",
  why: "Dropping a table breaks the code still running against it during a rolling deploy, and loses its data.",
  instead: "Stop using the table in a release first; drop it in a later one.",
  squawk: "ban-drop-table",
  silenceable: true,
  check(kind, body, { state, report }) {
    if (kind !== "DropStmt" || body.removeType !== "OBJECT_TABLE") return;
    for (const object of list(body.objects)) {
      const name = strings(field(field(object, "List"), "items")).join(".");
      if (state.created.has(name)) continue;
      report(`DROP TABLE ${name}: code still running may use it`);
    }
  },
});
