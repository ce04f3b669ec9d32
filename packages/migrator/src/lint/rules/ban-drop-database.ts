import { defineRule } from "../rule.js";

export default defineRule({
  id: "ban-drop-database",
  severity: "error",
  why: "A migration that drops a database destroys every schema in it.",
  instead: "Drop databases by hand, never from a migration.",
  squawk: "ban-drop-database",
  silenceable: true,
  check(kind, body, { report }) {
    if (kind === "DropdbStmt") report(`DROP DATABASE ${String(body.dbname)}`);
  },
});
