import { defineRule } from "../rule.js";
import { columnTypes } from "../syntax.js";

export default defineRule({
  id: "prefer-bigint-over-smallint",
  severity: "warning",
  why: "A 16-bit integer runs out at 32 767, and widening it later rewrites the table and its indexes.",
  instead: "bigint (or integer when its range is known to suffice).",
  squawk: "prefer-bigint-over-smallint",
  silenceable: true,
  check(kind, body, { report }) {
    for (const column of columnTypes({ [kind]: body })) {
      if (["int2", "smallserial", "serial2"].includes(column.type))
        report(`${column.what} is a 16-bit integer`, column.at);
    }
  },
});
