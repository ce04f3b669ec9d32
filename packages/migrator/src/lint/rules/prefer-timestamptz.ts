import { defineRule } from "../rule.js";
import { columnTypes } from "../syntax.js";

export default defineRule({
  id: "prefer-timestamptz",
  severity: "warning",
  why: "timestamp without time zone stores wall-clock time with no zone, so values change meaning with the session's TimeZone.",
  instead: "timestamptz.",
  squawk: "prefer-timestamptz",
  silenceable: true,
  check(kind, body, { report }) {
    for (const column of columnTypes({ [kind]: body })) {
      if (column.type === "timestamp") report(`${column.what} is timestamp without time zone`, column.at);
    }
  },
});
