import { defineRule } from "../rule.js";
import { columnTypes } from "../syntax.js";

export default defineRule({
  id: "prefer-text-field",
  severity: "warning",
  why: "Changing the length of varchar(n) later takes an ACCESS EXCLUSIVE lock (and a rewrite when it shrinks); text is stored the same way.",
  instead:
    "text, with a CHECK (length(col) <= n) if the length matters (NOT VALID, then VALIDATE, to change it).",
  squawk: "prefer-text-field",
  silenceable: true,
  check(kind, body, { report }) {
    for (const column of columnTypes({ [kind]: body })) {
      if (column.type === "varchar" && column.modified) report(`${column.what} is varchar(n)`, column.at);
    }
  },
});
