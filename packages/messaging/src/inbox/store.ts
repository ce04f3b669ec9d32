import type { Sql, TransactionSql } from "postgres";
import type { InboundMessage } from "../channel.js";
import { InboxCommitTimeoutError } from "../errors.js";
import type { RejectedMessage } from "../limits.js";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.js";
import { jsonForPostgres, textForPostgres } from "./postgres-text.js";
import { INBOX_NOTIFY_CHANNEL } from "./wakeup.js";

/**
 * The statuses of an inbox row (`rejected`: content refused by a per-message limit, never answered; `notice`: an
 * event about the conversation, such as a changed number, recorded and never answered).
 */
export const INBOX_STATUSES = ["pending", "processing", "done", "failed", "rejected", "notice"] as const;
/** One of `INBOX_STATUSES`. */
export type InboxStatus = (typeof INBOX_STATUSES)[number];

/** A row a worker holds: updates only succeed while `leaseId` is still the row's lease. */
export interface ClaimedMessage {
  channel: string;
  messageId: string;
  leaseId: string;
  attempts: number;
  message: InboundMessage;
  replyParts: string[] | null;
  partsSent: number;
  lastError: string | null;
  /** The traceparent of the webhook span that stored it; null without tracing. */
  traceParent: string | null;
}

/** What the inbox listing shows; the message content stays in the database. */
export interface InboxEntry {
  channel: string;
  message_id: string;
  account_id: string;
  from: string;
  type: string;
  status: InboxStatus;
  attempts: number;
  last_error: string | null;
  received_at: Date;
  updated_at: Date;
}

/** What one delivery did to the inbox; `rejected` is there only when some of its messages were. */
export interface InsertCounts {
  /** Messages newly stored for the worker. */
  received: number;
  /** Messages (accepted or rejected) already in the inbox. */
  duplicates: number;
  /** Messages of this delivery newly recorded as rejected (they broke a limit). */
  rejected?: number;
}

/** One delivery's messages (and its rejected ones), all stored or none. */
export interface DeliveryWrite {
  channel: string;
  messages: readonly InboundMessage[];
  rejected: readonly RejectedMessage[];
  /** The W3C traceparent of the webhook span that received them, stored with each row (tracing on). */
  traceParent?: string | undefined;
  /** The conversation of a message (the channel's session id), which orders and erases it. */
  sessionOf?: ((message: InboundMessage) => string) | undefined;
}

/** Rows of one channel by status, and how long its oldest pending row has waited. */
export interface InboxStats {
  channel: string;
  counts: Record<InboxStatus, number>;
  /** Milliseconds since the oldest pending row was received; null when none is pending. */
  oldest_pending_ms: number | null;
  oldest_pending_at: Date | null;
}

/** What a retention pass deleted, by rule. */
export interface PruneCounts {
  done: number;
  failed: number;
}

/** Bounds of the group commit on the acknowledgement path (see GroupCommitOptions). */
export type GroupCommitBounds = Pick<
  GroupCommitOptions<DeliveryWrite, InsertCounts>,
  "maxBatchSize" | "maxInFlight" | "maxWaitMs" | "maxCommitMs"
>;

/**
 * The durable inbox, in the database it is given. All times are the database's clock, so several server
 * processes agree on what is due and which leases have expired.
 */
export class InboxStore {
  private schemaReady: Promise<void> | undefined;
  /** Set once the schema is there, so the acknowledgement path can build its statement without a promise hop. */
  private schemaIsReady = false;
  private readonly groupCommit: GroupCommit<DeliveryWrite, InsertCounts | Error> | undefined;
  /** The workers' leased updates, committed together as the deliveries are (see updateLeasedTogether). */
  private readonly updateCommit: GroupCommit<LeasedUpdate, boolean | Error> | undefined;

  /**
   * `prepareSchema` (the inbox migrations) runs before the first operation and again after a failure, so
   * a database that is down at startup delays the inbox instead of stopping the server. With `groupCommit`,
   * deliveries that arrive while earlier ones are being committed share the next commit, and so do the workers'
   * updates of their leased rows; without it each delivery and each update has a statement of its own.
   * `commitTimeoutMs` bounds each of those statements on its own (the group commit has `maxCommitMs`): past it
   * the write is refused with InboxCommitTimeoutError, whatever the database is doing.
   */
  constructor(
    private readonly sql: Sql,
    private readonly prepareSchema: () => Promise<void> = async () => {},
    groupCommit?: GroupCommitBounds,
    private readonly commitTimeoutMs?: number,
  ) {
    if (groupCommit !== undefined) {
      this.groupCommit = new GroupCommit({
        ...groupCommit,
        commit: (deliveries) => this.insertIsolatingRefused(deliveries),
        sizeOf: (delivery) => delivery.messages.length + delivery.rejected.length,
      });
      this.updateCommit = new GroupCommit({
        ...groupCommit,
        commit: (updates) => this.updateLeasedTogether(updates),
        sizeOf: () => 1,
      });
    }
  }

  /** Resolves once the inbox tables exist; rejects (and retries on the next call) while they cannot. */
  ready(): Promise<void> {
    this.schemaReady ??= this.prepareSchema().then(
      () => {
        this.schemaIsReady = true;
      },
      (error: unknown) => {
        this.schemaReady = undefined;
        throw error;
      },
    );
    return this.schemaReady;
  }

  /**
   * Resolves when a delivery could be stored now: the inbox tables are there (unless `withTables` is false: no
   * channel, no delivery to store), a connection answers within `timeoutMs`, and the session may write the inbox
   * (not a read-only transaction, not a standby in recovery, INSERT granted). Otherwise resolves with the reason,
   * in words an operator acts on (no server address).
   */
  async canStore(timeoutMs: number, withTables = true): Promise<InboxStoreCheck> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<InboxStoreCheck>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, reason: `the database did not answer within ${timeoutMs} ms` }),
        timeoutMs,
      );
    });
    const probe = async (): Promise<InboxStoreCheck> => {
      if (withTables) await this.ready();
      const [row] = await this.sql<{ read_only: string; recovery: boolean; insert: boolean }[]>`
        SELECT current_setting('transaction_read_only') AS read_only, pg_is_in_recovery() AS recovery,
               ${withTables ? this.sql`has_table_privilege('messaging.inbox', 'INSERT')` : this.sql`true`} AS insert
      `;
      if (row?.recovery) return { ok: false, reason: "the database is a standby in recovery (read-only)" };
      if (row?.read_only !== "off") return { ok: false, reason: "the database is read-only" };
      if (row?.insert !== true) return { ok: false, reason: "no INSERT privilege on messaging.inbox" };
      return { ok: true };
    };
    const checked = probe().catch(
      (error: unknown): InboxStoreCheck => ({ ok: false, reason: describeDatabaseError(error) }),
    );
    return Promise.race([checked, deadline]).finally(() => clearTimeout(timer));
  }

  /**
   * Stores every message of one delivery, all of them or none (one statement, one transaction), possibly
   * in a commit shared with other deliveries. The rejected ones become `rejected` rows that no worker
   * claims. A key already in the inbox is skipped and counted as a duplicate. Resolves only after the
   * commit holding the delivery's rows.
   */
  insert(
    channel: string,
    messages: readonly InboundMessage[],
    rejected: readonly RejectedMessage[] = [],
    sessionOf?: (message: InboundMessage) => string,
    traceParent?: string,
  ): Promise<InsertCounts> {
    const delivery = { channel, messages, rejected, sessionOf, traceParent };
    if (this.groupCommit !== undefined) {
      return this.groupCommit.submit(delivery).then(resultOrThrow);
    }
    return this.withDeadline(this.insertDeliveries([delivery])).then((counts) => counts[0] as InsertCounts);
  }

  /**
   * Stores a batch of deliveries as insertDeliveries does; when PostgreSQL refuses the batch for what one of
   * them holds (a data or constraint error: nothing was committed), stores each half again on its own, down
   * to the delivery it refuses, which gets its error while the others are stored. One bad delivery must not
   * fail the deliveries that happened to share its commit, again on each of their redeliveries. Any other
   * error (the database is gone, a timeout) fails the whole batch, as a commit of one would have failed.
   */
  private async insertIsolatingRefused(
    deliveries: readonly DeliveryWrite[],
  ): Promise<(InsertCounts | Error)[]> {
    try {
      return await this.insertDeliveries(deliveries);
    } catch (error) {
      if (!isRefusedForContent(error)) throw error;
      if (deliveries.length === 1) return [error];
      const middle = Math.ceil(deliveries.length / 2);
      const halves = [deliveries.slice(0, middle), deliveries.slice(middle)];
      const outcomes: (InsertCounts | Error)[] = [];
      // In order, so the first occurrence of a key is still the one stored.
      for (const half of halves) {
        outcomes.push(
          ...(await this.insertIsolatingRefused(half).catch((failure: unknown) =>
            half.map(() => asError(failure)),
          )),
        );
      }
      return outcomes;
    }
  }

  /**
   * Stores several deliveries in one statement and returns each one's counts, in order. A key that occurs
   * more than once (in the inbox, in another delivery of the batch, or twice in one delivery) is stored by
   * its first occurrence in batch order and a duplicate everywhere else. New rows wake the workers of every
   * process (NOTIFY, sent at commit).
   */
  async insertDeliveries(deliveries: readonly DeliveryWrite[]): Promise<InsertCounts[]> {
    // Without a hop once the schema is there: the group commit starts the next shared commit before it answers
    // the last one's deliveries, and the statement should reach the socket before their responses are written.
    if (!this.schemaIsReady) await this.ready();
    // The first occurrence of each (channel, key) in batch order is the one written.
    const owner = new Map<string, number>();
    const rows: InboxRow[] = [];
    deliveries.forEach((delivery, index) => {
      for (const row of rowsOf(delivery)) {
        const key = rowKey(row.channel, row.key);
        if (owner.has(key)) continue;
        owner.set(key, index);
        rows.push(row);
      }
    });
    const counts: InsertCounts[] = deliveries.map((delivery) => ({
      received: 0,
      duplicates: delivery.messages.length + delivery.rejected.length,
      ...(delivery.rejected.length > 0 ? { rejected: 0 } : {}),
    }));
    if (rows.length === 0) return counts;
    // `seq` is taken row by row in the order of the array (a function scan keeps it), so messages of one delivery
    // with the same stamp keep the order the chat product listed them in.
    const inserted = await this.sql<{ channel: string; message_id: string; status: string }[]>`
      INSERT INTO messaging.inbox
        (channel, message_id, account_id, sender, message_type, message, status, last_error, session_id,
         sent_at, seq, trace_parent)
      SELECT r->>'channel', r->>'key', r->>'accountId', r->>'from', r->>'type', r->'message', r->>'status',
             r->>'reason', r->>'session',
             coalesce(to_timestamp((r->>'sentAt')::double precision / 1000), now()),
             nextval('messaging.inbox_seq'), r->>'traceParent'
      FROM jsonb_array_elements(${jsonForPostgres(rows)}::text::jsonb) WITH ORDINALITY AS a(r, n)
      ON CONFLICT (channel, message_id) DO NOTHING
      RETURNING channel, message_id, status, pg_notify(${INBOX_NOTIFY_CHANNEL}, channel)
    `;
    for (const row of inserted) {
      const delivery = counts[owner.get(rowKey(row.channel, row.message_id)) ?? -1];
      if (delivery === undefined) throw new Error(`inbox returned a row it was not given: ${row.message_id}`);
      if (row.status !== "rejected") delivery.received++;
      else delivery.rejected = (delivery.rejected ?? 0) + 1;
      delivery.duplicates--;
    }
    return counts;
  }

  /**
   * Leases up to `limit` due rows of `channel`: pending rows whose retry time has come and processing rows whose lease
   * expired (their worker died). SKIP LOCKED lets concurrent workers take disjoint rows without waiting.
   *
   * The claim commits without waiting for its WAL flush (`synchronous_commit` off for this transaction only): other
   * workers see it at once all the same, and a claim lost in a PostgreSQL crash only means the row is claimed
   * again. What must survive a crash is written later by a synchronous commit, which flushes the claim with it,
   * before anything leaves the process: saveReply before the first send, renewLease before resending a saved reply.
   * That spares an idle message one flush between the webhook's commit and the agent call.
   */
  async claim(channel: string, limit: number, leaseMs: number, ordered = false): Promise<ClaimedMessage[]> {
    await this.ready();
    const rows = ordered
      ? await this.sql.begin(async (sql) => {
          // Claims of one channel take turns (a lock held until this claim commits), so the next claim's snapshot
          // sees this one's rows as processing. Without it, two claims at once could each take a head of the same
          // conversation: one the row in flight, the other a message that arrived later but was stamped earlier.
          const [, claimed] = await Promise.all([
            sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK}, hashtext(${channel}))`,
            this.claimStatement(sql, channel, limit, leaseMs, true),
          ]);
          return claimed;
        })
      : await this.claimStatement(this.sql, channel, limit, leaseMs, false);
    return rows.map((row) => ({
      channel: row.channel,
      messageId: row.message_id,
      leaseId: row.lease_id,
      attempts: row.attempts,
      message: row.message,
      replyParts: row.reply_parts,
      partsSent: row.parts_sent,
      lastError: row.last_error,
      traceParent: row.trace_parent,
    }));
  }

  /**
   * The claim's UPDATE. `ordered`: only the head of each conversation is due, i.e. no other row of its session is
   * pending or processing with an earlier (stamp, arrival), and none is processing under a live lease. The second
   * rule keeps a message that arrives late but is stamped earlier than the one in flight from overtaking it: it
   * waits for that one, then goes before the rest. Rows without a session id (stored before conversations were
   * recorded) are not ordered.
   */
  private claimStatement(
    sql: Sql | TransactionSql,
    channel: string,
    limit: number,
    leaseMs: number,
    ordered: boolean,
  ) {
    const head = ordered
      ? sql`AND (c.session_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM messaging.inbox AS e
          WHERE e.channel = c.channel AND e.session_id = c.session_id
            AND e.status IN ('pending', 'processing') AND e.message_id <> c.message_id
            AND ((e.sent_at, e.seq) < (c.sent_at, c.seq) OR (e.status = 'processing' AND e.next_attempt_at > now()))
        ))`
      : sql``;
    return sql<ClaimRow[]>`
      UPDATE messaging.inbox AS i
      SET status = 'processing',
          attempts = i.attempts + 1,
          lease_id = gen_random_uuid(),
          next_attempt_at = now() + ${leaseMs}::double precision * interval '1 millisecond',
          updated_at = now()
      FROM (
        SELECT c.channel, c.message_id FROM messaging.inbox AS c
        WHERE c.channel = ${channel} AND c.status IN ('pending', 'processing') AND c.next_attempt_at <= now()
          ${head}
        ORDER BY c.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) AS due
      WHERE i.channel = due.channel AND i.message_id = due.message_id
      RETURNING i.channel, i.message_id, i.lease_id, i.attempts, i.message, i.reply_parts, i.parts_sent,
                i.last_error, i.trace_parent, set_config('synchronous_commit', 'off', true)
    `;
  }

  /** Saves the reply before sending it; also renews the lease. False when the lease was lost. */
  async saveReply(lease: ClaimedMessage, parts: string[], leaseMs: number): Promise<boolean> {
    return this.updateLeased(
      lease,
      this.sql`reply_parts = ${jsonForPostgres(parts)}::text::jsonb, ${this.leaseFor(leaseMs)}`,
    );
  }

  /** Renews the lease, durably (see claim). False when the lease was lost. */
  async renewLease(lease: ClaimedMessage, leaseMs: number): Promise<boolean> {
    return this.updateLeased(lease, this.leaseFor(leaseMs));
  }

  /** Records that the first `partsSent` parts were accepted; also renews the lease. */
  async markPartsSent(lease: ClaimedMessage, partsSent: number, leaseMs: number): Promise<boolean> {
    return this.updateLeased(lease, this.sql`parts_sent = ${partsSent}, ${this.leaseFor(leaseMs)}`);
  }

  /** Done, with `partsSent` parts accepted: the last part's record and the outcome in one commit. */
  async markDone(lease: ClaimedMessage, partsSent: number): Promise<boolean> {
    return this.updateLeased(lease, this.sql`status = 'done', lease_id = NULL, parts_sent = ${partsSent}`);
  }

  /** `error` as in markFailed. */
  async retryLater(lease: ClaimedMessage, error: string, delayMs: number): Promise<boolean> {
    return this.updateLeased(
      lease,
      this.sql`status = 'pending', lease_id = NULL, last_error = ${textForPostgres(error)},
               next_attempt_at = now() + ${delayMs}::double precision * interval '1 millisecond'`,
    );
  }

  /**
   * Back to `pending` for `delayMs` without counting the attempt (its send was paced, not refused), the first
   * `partsSent` parts recorded as accepted.
   */
  async defer(lease: ClaimedMessage, partsSent: number, delayMs: number): Promise<boolean> {
    return this.updateLeased(
      lease,
      this
        .sql`status = 'pending', lease_id = NULL, attempts = greatest(attempts - 1, 0), parts_sent = ${partsSent},
               next_attempt_at = now() + ${delayMs}::double precision * interval '1 millisecond'`,
    );
  }

  /** `error` may quote an agent's or a chat API's answer: text PostgreSQL refuses is stored as U+FFFD. */
  async markFailed(lease: ClaimedMessage, error: string): Promise<boolean> {
    return this.updateLeased(
      lease,
      this.sql`status = 'failed', lease_id = NULL, last_error = ${textForPostgres(error)}`,
    );
  }

  async list(channel: string, status: InboxStatus | undefined, limit: number): Promise<InboxEntry[]> {
    await this.ready();
    return this.sql<InboxEntry[]>`
      SELECT ${this.sql.unsafe(ENTRY_COLUMNS)}
      FROM messaging.inbox
      WHERE channel = ${channel} ${status === undefined ? this.sql`` : this.sql`AND status = ${status}`}
      ORDER BY received_at DESC, message_id
      LIMIT ${limit}
    `;
  }

  /** Counts by status and the oldest pending row of `channel`. */
  async stats(channel: string): Promise<InboxStats> {
    await this.ready();
    const [byStatus, [oldest]] = await Promise.all([
      this.sql<{ status: InboxStatus; count: string }[]>`
        SELECT status, count(*) AS count FROM messaging.inbox WHERE channel = ${channel} GROUP BY status
      `,
      this.sql<{ at: Date | null; age_ms: number | null }[]>`
        SELECT min(received_at) AS at,
               floor(extract(epoch FROM now() - min(received_at)) * 1000)::double precision AS age_ms
        FROM messaging.inbox WHERE channel = ${channel} AND status = 'pending'
      `,
    ]);
    const counts = Object.fromEntries(INBOX_STATUSES.map((status) => [status, 0])) as Record<
      InboxStatus,
      number
    >;
    for (const row of byStatus) counts[row.status] = Number(row.count);
    return {
      channel,
      counts,
      oldest_pending_ms: oldest?.age_ms == null ? null : Math.max(0, oldest.age_ms),
      oldest_pending_at: oldest?.at ?? null,
    };
  }

  /**
   * A `failed` row back to `pending`: attempts reset, due now, its saved reply and the count of parts already
   * accepted kept, so a retry sends only what was not sent. `undefined` when the row is unknown; the row as it is
   * when it is not `failed`.
   */
  async retry(
    channel: string,
    messageId: string,
  ): Promise<{ retried: boolean; entry: InboxEntry } | undefined> {
    await this.ready();
    const [retried] = await this.sql<InboxEntry[]>`
      UPDATE messaging.inbox SET status = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now()
      WHERE channel = ${channel} AND message_id = ${messageId} AND status = 'failed'
      RETURNING ${this.sql.unsafe(ENTRY_COLUMNS)}, pg_notify(${INBOX_NOTIFY_CHANNEL}, channel)
    `;
    if (retried !== undefined) return { retried: true, entry: withoutNotify(retried) };
    const [entry] = await this.sql<InboxEntry[]>`
      SELECT ${this.sql.unsafe(ENTRY_COLUMNS)} FROM messaging.inbox WHERE channel = ${channel} AND message_id = ${messageId}
    `;
    return entry === undefined ? undefined : { retried: false, entry };
  }

  /** Up to `limit` failed rows of `channel` back to `pending` as `retry` does, oldest first; returns their ids. */
  async retryFailed(channel: string, limit: number): Promise<string[]> {
    await this.ready();
    const rows = await this.sql<{ message_id: string; received_at: Date }[]>`
      UPDATE messaging.inbox AS i
      SET status = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now()
      FROM (
        SELECT channel, message_id FROM messaging.inbox
        WHERE channel = ${channel} AND status = 'failed'
        ORDER BY received_at, message_id
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) AS f
      WHERE i.channel = f.channel AND i.message_id = f.message_id AND i.status = 'failed'
      RETURNING i.message_id, i.received_at, pg_notify(${INBOX_NOTIFY_CHANNEL}, i.channel)
    `;
    // RETURNING follows no order: sorted again, oldest first.
    return [...rows]
      .sort(
        (a, b) => a.received_at.getTime() - b.received_at.getTime() || (a.message_id < b.message_id ? -1 : 1),
      )
      .map((row) => row.message_id);
  }

  /**
   * Deletes every row of one conversation, whatever its status, with its text and reply. A row a worker is
   * handling goes too: the worker's next update finds no row, so it sends nothing more. Rows stored before
   * conversations were recorded are matched by the session id their channel would give them.
   */
  async erase(channel: string, sessionId: string): Promise<number> {
    await this.ready();
    const rows = await this.sql`
      DELETE FROM messaging.inbox
      WHERE channel = ${channel}
        AND (session_id = ${sessionId} OR (session_id IS NULL AND ${this.sql.unsafe(LEGACY_SESSION_ID)} = ${sessionId}))
      RETURNING 1
    `;
    // The conversation's send pace is keyed by its address (a phone number, a chat id): it goes too.
    await this.sql`DELETE FROM messaging.send_pace WHERE key = ${sessionId}`;
    return rows.length;
  }

  /**
   * One retention step: deletes up to `batch` finished rows of `channel` older than the given days (0 keeps them),
   * skipping rows another transaction holds, within `statementTimeoutMs`. Call again while it deletes a full batch.
   */
  async prune(
    channel: string,
    rule: { doneDays: number; failedDays: number; batch: number; statementTimeoutMs: number },
  ): Promise<PruneCounts> {
    await this.ready();
    const deleteOlder = (sql: TransactionSql, statuses: string[], days: number) => sql<{ status: string }[]>`
      DELETE FROM messaging.inbox AS i
      USING (
        SELECT channel, message_id FROM messaging.inbox
        WHERE channel = ${channel} AND status = ANY(${statuses}::text[])
          AND updated_at < now() - ${days}::double precision * interval '1 day'
        LIMIT ${rule.batch}
        FOR UPDATE SKIP LOCKED
      ) AS old
      WHERE i.channel = old.channel AND i.message_id = old.message_id
        AND i.status = ANY(${statuses}::text[])
      RETURNING i.status
    `;
    return this.sql.begin(async (sql) => {
      await sql`SELECT set_config('statement_timeout', ${String(rule.statementTimeoutMs)}, true)`;
      const done =
        rule.doneDays > 0 ? await deleteOlder(sql, ["done", "rejected", "notice"], rule.doneDays) : [];
      const failed = rule.failedDays > 0 ? await deleteOlder(sql, ["failed"], rule.failedDays) : [];
      // Send permits of chats and accounts idle for a day: a pace matters for seconds, and a chat's key is its
      // address. One that is needed again is made again.
      await sql`
        DELETE FROM messaging.send_pace AS p
        USING (
          SELECT key, slot FROM messaging.send_pace
          WHERE key LIKE ${`${channel}:%`} AND free_at < now() - interval '1 day'
          LIMIT ${rule.batch}
          FOR UPDATE SKIP LOCKED
        ) AS idle
        WHERE p.key = idle.key AND p.slot = idle.slot`;
      return { done: done.length, failed: failed.length };
    });
  }

  /** The assignment that extends a lease by `leaseMs` from now. */
  private leaseFor(leaseMs: number): ReturnType<Sql> {
    return this.sql`next_attempt_at = now() + ${leaseMs}::double precision * interval '1 millisecond'`;
  }

  /** Applies `assignments` to the row while `lease` still holds it; resolves once committed. */
  private async updateLeased(lease: ClaimedMessage, assignments: ReturnType<Sql>): Promise<boolean> {
    const update = { lease, assignments };
    if (this.updateCommit === undefined) {
      return (await this.withDeadline(leasedUpdate(this.sql, update))).length === 1;
    }
    return this.updateCommit.submit(update).then(resultOrThrow);
  }

  /** `write`, refused with InboxCommitTimeoutError once it has taken `commitTimeoutMs` (see the constructor). */
  private withDeadline<T>(write: Promise<T>): Promise<T> {
    const timeoutMs = this.commitTimeoutMs;
    if (timeoutMs === undefined) return write;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new InboxCommitTimeoutError(timeoutMs)), timeoutMs);
    });
    return Promise.race([write, deadline]).finally(() => clearTimeout(timer));
  }

  /**
   * Several workers' leased updates in one transaction (the statements pipelined), so a busy worker pays one
   * commit for many rows rather than two commits per message. They take their row locks in key order, whatever
   * order they came in, so two processes' transactions cannot deadlock on each other. When PostgreSQL refuses one
   * for its content (nothing was committed), each is applied again on its own and only that one fails: one bad
   * update must not fail the others, whose messages would then be sent again after their leases expire.
   */
  private async updateLeasedTogether(updates: readonly LeasedUpdate[]): Promise<(boolean | Error)[]> {
    if (updates.length === 1)
      return [(await leasedUpdate(this.sql, updates[0] as LeasedUpdate)).length === 1];
    // Array sort is stable: two updates of one row keep the order they came in.
    const order = updates
      .map((update, index) => ({ update, index }))
      .sort((a, b) => byRow(a.update, b.update))
      .map(({ index }) => index);
    try {
      const matched = await this.sql.begin((sql) =>
        order.map((index) => leasedUpdate(sql, updates[index] as LeasedUpdate)),
      );
      const outcomes: boolean[] = [];
      order.forEach((index, position) => {
        outcomes[index] = (matched[position] as readonly unknown[]).length === 1;
      });
      return outcomes;
    } catch (error) {
      if (!isRefusedForContent(error)) throw error;
      return Promise.all(
        updates.map((update) => leasedUpdate(this.sql, update).then((rows) => rows.length === 1, asError)),
      );
    }
  }
}

/** Whether the inbox can store a delivery now, and if not, why. */
export type InboxStoreCheck = { ok: true } | { ok: false; reason: string };

/** SQLSTATEs (and Node socket codes) of a database that cannot take writes now, in an operator's words. */
const DATABASE_STATES: Readonly<Record<string, string>> = {
  "25006": "the database is read-only",
  "53100": "the database's disk is full",
  "53200": "the database is out of memory",
  "53300": "the database is out of connection slots",
  "57P01": "the database is shutting down",
  "57P03": "the database is starting up or shutting down",
  ECONNREFUSED: "the database refuses connections",
  ECONNRESET: "the connection to the database was reset",
  CONNECT_TIMEOUT: "connecting to the database timed out",
  CONNECTION_CLOSED: "the connection to the database closed",
  CONNECTION_DESTROYED: "the connection to the database was closed",
  INBOX_COMMIT_TIMEOUT: "the database did not finish a commit in time",
};

/**
 * A database failure in words safe to show on an unauthenticated health check: the state it names (read-only,
 * disk full, out of connection slots, unreachable), or its SQLSTATE, never its message (which may hold an
 * address or a statement).
 */
export function describeDatabaseError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return "the database failed";
  return DATABASE_STATES[code] ?? `the database failed (${code.replace(/[^0-9A-Z_]/gi, "").slice(0, 32)})`;
}

/** Namespace of the advisory lock that makes claims of one channel take turns (ordered claims only). */
const CLAIM_LOCK = 0x6d736731; // "msg1"

/** The columns of an InboxEntry (a constant, used as `sql.unsafe` in a statement). */
const ENTRY_COLUMNS = `channel, message_id, account_id, sender AS "from", message_type AS "type", status, attempts,
  last_error, received_at, updated_at`;

/**
 * The session id a shipped channel gives a row stored before session ids were recorded (see each channel's
 * `sessionId`), so erasure finds those rows too.
 */
const LEGACY_SESSION_ID = `CASE channel
  WHEN 'whatsapp' THEN 'whatsapp:' || account_id || ':' || sender
  WHEN 'telegram' THEN 'telegram:' || account_id || ':' || coalesce(message->>'conversation', sender)
  WHEN 'slack' THEN 'slack:' || account_id || ':' || coalesce(message->>'conversation', sender)
                    || coalesce(':' || (message->>'thread'), '')
  END`;

/** The row returned by an UPDATE that also notified, without the notify's column. */
function withoutNotify(row: InboxEntry): InboxEntry {
  const { pg_notify: _, ...entry } = row as InboxEntry & { pg_notify?: unknown };
  return entry;
}

/** One worker's update of a row it leases. */
interface LeasedUpdate {
  lease: ClaimedMessage;
  assignments: ReturnType<Sql>;
}

/** Orders leased updates by their row's key (channel, message id), the order their row locks are taken in. */
function byRow({ lease: a }: LeasedUpdate, { lease: b }: LeasedUpdate): number {
  if (a.channel !== b.channel) return a.channel < b.channel ? -1 : 1;
  return a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0;
}

/** A group commit's outcome for one item: the result, or its error thrown. */
function resultOrThrow<R>(outcome: R | Error): R {
  if (outcome instanceof Error) throw outcome;
  return outcome;
}

function asError(failure: unknown): Error {
  return failure instanceof Error ? failure : new Error(String(failure));
}

/** The statement of one leased update, on the pool or in a transaction; a row back means the lease held. */
function leasedUpdate(sql: Sql | TransactionSql, { lease, assignments }: LeasedUpdate) {
  return sql`
    UPDATE messaging.inbox SET ${assignments}, updated_at = now()
    WHERE channel = ${lease.channel} AND message_id = ${lease.messageId}
      AND lease_id = ${lease.leaseId} AND status = 'processing'
    RETURNING 1
  `;
}

interface ClaimRow {
  channel: string;
  message_id: string;
  lease_id: string;
  attempts: number;
  message: InboundMessage;
  reply_parts: string[] | null;
  parts_sent: number;
  last_error: string | null;
  trace_parent: string | null;
}

/** A row to insert, as the INSERT reads it from JSON. */
interface InboxRow {
  channel: string;
  key: string;
  accountId: string;
  from: string;
  type: string;
  message: unknown;
  status: "pending" | "rejected" | "notice";
  reason: string | null;
  traceParent?: string | undefined;
  session?: string | undefined;
  sentAt?: number | undefined;
}

/** The chat product's stamp when it is a plausible time (2001 to 2286); otherwise the arrival time is used. */
function stampOf(sentAt: unknown): number | undefined {
  return typeof sentAt === "number" && Number.isFinite(sentAt) && sentAt >= 1e12 && sentAt < 1e13
    ? sentAt
    : undefined;
}

function rowsOf(delivery: DeliveryWrite): InboxRow[] {
  return [
    ...delivery.messages.map((message) => ({
      channel: delivery.channel,
      key: message.id,
      accountId: message.accountId,
      from: message.from,
      type: message.type,
      message,
      // A notice (a user changed their number) is recorded only: no agent, no reply.
      status: message.notice === true ? ("notice" as const) : ("pending" as const),
      reason: null,
      session: delivery.sessionOf?.(message),
      sentAt: stampOf(message.sentAt),
      traceParent: delivery.traceParent,
    })),
    ...delivery.rejected.map(({ raw, ...rejection }) => ({
      ...rejection,
      channel: delivery.channel,
      // What failed its channel's schema is kept as sent, so an operator can recover it.
      message: raw === undefined ? { rejected: rejection.reason } : { rejected: rejection.reason, raw },
      status: "rejected" as const,
      traceParent: delivery.traceParent,
    })),
  ];
}

/** A row's primary key as the database stores it (see postgres-text.ts), so returned rows map back to their owner. */
function rowKey(channel: string, key: string): string {
  return JSON.stringify([textForPostgres(channel), textForPostgres(key)]);
}

/**
 * SQLSTATE classes of an error caused by the statement's data rather than the database's state: 22 (data
 * exception, e.g. text jsonb refuses), 23 (integrity constraint violation), 54 (program limit exceeded, e.g.
 * an index row too large).
 */
function isRefusedForContent(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}
