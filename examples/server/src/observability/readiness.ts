import type { InboxStoreCheck } from "@agent-platform/messaging";
import type { RegisteredDatabase } from "../databases.js";

/** The longest each check may take: a database slower than this is not ready to take traffic. */
export const READY_TIMEOUT_MS = 2_000;

/** What `/ready` depends on besides the registered databases. */
export interface ReadinessSources {
  readonly databases: readonly RegisteredDatabase[];
  /** Whether the inbox can store a delivery now (the messaging package's own check), when a channel stores. */
  readonly inbox: (() => Promise<InboxStoreCheck>) | undefined;
  /** Whether the messaging workers were started and not stopped. */
  readonly workersRunning: () => boolean;
  readonly timeoutMs?: number;
}

function within<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split("\n")[0] ?? "").slice(0, 200);
}

/**
 * Why the server should not take traffic now, one reason per failing check (empty: ready): every registered
 * database answers within the time, its schema is not behind the code (no pending migration), the inbox can store,
 * and the messaging workers run. The checks run in parallel, each bounded.
 */
export async function notReadyReasons(sources: ReadinessSources): Promise<string[]> {
  const timeoutMs = sources.timeoutMs ?? READY_TIMEOUT_MS;
  const checks = sources.databases.map(async (database): Promise<string | undefined> => {
    try {
      await within(database.sql`SELECT 1`, timeoutMs, `database '${database.id}'`);
    } catch (error) {
      return `database '${database.id}' does not answer (${firstLine(error)})`;
    }
    try {
      const status = await within(database.migrator.status(), timeoutMs, "migration status");
      if (status.pending.length > 0) {
        const versions = status.pending.map((migration) => migration.version).join(", ");
        return `database '${database.id}' schema is behind: ${status.current ?? "empty"} < ${status.latest} (pending ${versions}); run platform-migrate up`;
      }
    } catch (error) {
      return `database '${database.id}' migration status unreadable (${firstLine(error)})`;
    }
    return undefined;
  });
  const { inbox } = sources;
  if (inbox !== undefined) {
    checks.push(
      within(inbox(), timeoutMs, "inbox write").then(
        (check) => (check.ok ? undefined : `the inbox cannot store (${check.reason})`),
        (error: unknown) => `the inbox cannot store (${firstLine(error)})`,
      ),
    );
  }
  if (!sources.workersRunning()) checks.push(Promise.resolve("the messaging workers are not running"));
  return (await Promise.all(checks)).filter((reason) => reason !== undefined);
}
