import { defineRule } from "../rule.js";
import { possiblySlow } from "../timeouts.js";

export default defineRule({
  id: "require-lock-timeout",
  severity: "warning",
  why: "A statement that takes a lock (DDL, REINDEX, VACUUM, LOCK, COMMENT ON) without a lock_timeout waits behind any long query, and every query on that table queues behind it: an outage.",
  instead:
    "Keep the migrator's `ddlLockTimeoutMs` (default 5 s) on, or SET lock_timeout = '2s'; before the first such statement (and retry the migration).",
  squawk: "require-lock-timeout",
  silenceable: true,
  check(kind, _body, { state, report }) {
    if (!possiblySlow(kind) || state.lockTimeout || !state.transactional || state.reported.has("lock"))
      return;
    state.reported.add("lock");
    report("this statement takes a lock, and no lock_timeout is set before it");
  },
});
