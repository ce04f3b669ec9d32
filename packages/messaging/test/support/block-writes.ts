import postgres from "postgres";

/**
 * Holds a SHARE lock on the inbox table from a connection of its own, so every INSERT into it waits on the
 * lock: a statement (and the batch it carries) can then be caught in flight and its backend terminated.
 */
export async function blockInboxWrites(url: string) {
  const holder = postgres(url, { max: 1, onnotice: () => {} });
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await holder.unsafe("BEGIN");
  await holder.unsafe("LOCK TABLE messaging.inbox IN SHARE MODE");
  const terminated = new Set<number>();
  /** Backends (not terminated yet) whose INSERT into the inbox waits on the lock. */
  const blockedInserts = async () => {
    const rows = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND query LIKE '%INSERT INTO messaging.inbox%'`;
    return rows.map((row) => row.pid).filter((pid) => !terminated.has(pid));
  };
  return {
    blockedInserts,
    /** The pid of a backend whose INSERT into the inbox waits on the lock (polls up to 10 s). */
    async waitForBlockedInsert(): Promise<number> {
      for (let attempt = 0; attempt < 1000; attempt++) {
        const [pid] = await blockedInserts();
        if (pid !== undefined) return pid;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error("no INSERT into the inbox is waiting on the lock");
    },
    async terminate(pid: number): Promise<void> {
      terminated.add(pid);
      await admin`SELECT pg_terminate_backend(${pid})`;
    },
    async release(): Promise<void> {
      await holder.unsafe("COMMIT");
      await holder.end();
      await admin.end();
    },
  };
}
