import { defineRule } from "../rule.js";
import { alterTableCommands } from "../syntax.js";

export default defineRule({
  id: "require-concurrent-partition-detach",
  severity: "error",
  why: "DETACH PARTITION without CONCURRENTLY takes an ACCESS EXCLUSIVE lock on the partitioned table.",
  instead:
    "DETACH PARTITION ... CONCURRENTLY (PostgreSQL 14+) in a migration of its own marked `-- platform-migrate: no-transaction`.",
  squawk: "require-concurrent-partition-detach",
  silenceable: true,
  check(kind, body, { report }) {
    for (const cmd of alterTableCommands(kind, body)) {
      const concurrent = (cmd.def as { PartitionCmd?: { concurrent?: boolean } } | undefined)?.PartitionCmd
        ?.concurrent;
      if (cmd.subtype === "AT_DetachPartition" && !concurrent)
        report("DETACH PARTITION without CONCURRENTLY");
    }
  },
});
