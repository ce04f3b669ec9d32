import type { Sql } from "postgres";

/** The inbox as the gauges show it. */
export interface InboxCounts {
  readonly messages: readonly { readonly channel: string; readonly status: string; readonly count: number }[];
  readonly oldestPending: readonly { readonly channel: string; readonly seconds: number }[];
}

/** The statuses an inbox row can have: every one is reported for every channel, 0 when none. */
export const INBOX_STATUSES = ["pending", "processing", "done", "failed", "rejected"] as const;
/** Least time between two reads of the inbox, whatever the scrape rate. */
export const INBOX_READ_INTERVAL_MS = 5_000;
const READ_TIMEOUT_MS = 2_000;

/**
 * The inbox counts for the gauges, read with one small query at most every `intervalMs`: scrapes in between (any
 * number of them, from any number of scrapers) get the last reading, and concurrent ones share one read. Only the
 * configured channels and known statuses are reported, so the labels are bounded by the configuration. A read
 * that fails or takes over 2 s keeps the last reading (empty at first) until the next interval.
 */
export function inboxCountsReader(
  sql: Sql,
  channels: readonly string[],
  intervalMs = INBOX_READ_INTERVAL_MS,
): { read(): Promise<InboxCounts>; readonly reads: () => number } {
  let last: InboxCounts = { messages: [], oldestPending: [] };
  let readAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<InboxCounts> | undefined;
  let reads = 0;

  async function query(): Promise<InboxCounts> {
    reads++;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("inbox read timed out")), READ_TIMEOUT_MS);
    });
    try {
      const rows = await Promise.race([
        sql<{ channel: string; status: string; count: number; oldest: number | null }[]>`
          SELECT channel, status, count(*)::int AS count,
                 extract(epoch FROM now() - min(received_at))::float8 AS oldest
          FROM messaging.inbox
          WHERE channel = ANY(${channels as string[]})
          GROUP BY channel, status`,
        timeout,
      ]);
      const known = new Set<string>(INBOX_STATUSES);
      const counts = new Map<string, number>();
      const oldest = new Map<string, number>(channels.map((channel) => [channel, 0]));
      for (const row of rows) {
        if (!known.has(row.status)) continue;
        counts.set(`${row.channel}\u0000${row.status}`, row.count);
        if ((row.status === "pending" || row.status === "processing") && row.oldest !== null) {
          oldest.set(row.channel, Math.max(oldest.get(row.channel) ?? 0, row.oldest));
        }
      }
      return {
        messages: channels.flatMap((channel) =>
          INBOX_STATUSES.map((status) => ({
            channel,
            status,
            count: counts.get(`${channel}\u0000${status}`) ?? 0,
          })),
        ),
        oldestPending: [...oldest].map(([channel, seconds]) => ({ channel, seconds })),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    reads: () => reads,
    read() {
      if (inFlight !== undefined) return inFlight;
      if (performance.now() - readAt < intervalMs) return Promise.resolve(last);
      readAt = performance.now();
      inFlight = query()
        .then(
          (counts) => {
            last = counts;
            return counts;
          },
          () => last,
        )
        .finally(() => {
          inFlight = undefined;
        });
      return inFlight;
    },
  };
}
