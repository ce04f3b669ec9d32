import { defineRule } from "../rule.js";
import { columnTypes } from "../syntax.js";

export default defineRule({
  id: "prefer-bigint-over-int",
  severity: "warning",
  why: "A 32-bit integer key runs out at 2.1 billion, and widening it later rewrites the table and its indexes.",
  instead: "bigint (bigserial, or bigint GENERATED ... AS IDENTITY).",
  squawk: "prefer-bigint-over-int",
  silenceable: true,
  check(kind, body, { report }) {
    for (const column of columnTypes({ [kind]: body })) {
      if (["int4", "serial", "serial4"].includes(column.type))
        report(`${column.what} is a 32-bit integer`, column.at);
    }
  },
});
