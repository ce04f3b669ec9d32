import { defineRule } from "../rule.js";
import { columnTypes } from "../syntax.js";

export default defineRule({
  id: "ban-char-field",
  severity: "warning",
  why: "char(n) pads with spaces and is no faster than text or varchar.",
  instead: "text (with a CHECK on length if needed).",
  squawk: "ban-char-field",
  silenceable: true,
  check(kind, body, { report }) {
    for (const column of columnTypes({ [kind]: body })) {
      if (["bpchar", "char", "character"].includes(column.type))
        report(`${column.what} is char(n)`, column.at);
    }
  },
});
