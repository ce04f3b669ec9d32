import { defineRule } from "../rule.js";

export default defineRule({
  id: "no-transaction-single-statement",
  severity: "error",
  why: "A no-transaction migration runs as one query, and PostgreSQL runs a multi-statement query as one implicit transaction: CONCURRENTLY fails and a failure leaves no clear state.",
  instead: "One statement per no-transaction migration.",
  silenceable: false,
  check(_kind, _body, { state, report }) {
    if (!state.transactional && state.index === 1) report("a second statement in a no-transaction migration");
  },
});
