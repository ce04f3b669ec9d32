import type { Sql, TransactionSql } from "postgres";
import type { InboundMessage } from "../channel.js";
import type { RejectedMessage } from "../limits.js";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.js";
import { jsonForPostgres, textForPostgres } from "./postgres-text.js";
import { INBOX_NOTIFY_CHANNEL } from "./wakeup.js";

/** The statuses of an inbox row (`rejected`: content refused by a per-message limit, never answered). */
export const INBOX_STATUSES = ["pending", "processing", "done", "failed", "rejected"] as const;
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
}

/** Bounds of the group commit on the acknowledgement path (see GroupCommitOptions). */
export type GroupCommitBounds = Pick<
  GroupCommitOptions<DeliveryWrite, InsertCounts>,
  "maxBatchSize" | "maxInFlight" | "maxWaitMs"
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
   */
  constructor(
    private readonly sql: Sql,
    private readonly prepareSchema: () => Promise<void> = async () => {},
    groupCommit?: GroupCommitBounds,
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
   * Stores every message of one delivery, all of them or none (one statement, one transaction), possibly
   * in a commit shared with other deliveries. The rejected ones become `rejected` rows that no worker
   * claims. A key already in the inbox is skipped and counted as a duplicate. Resolves only after the
   * commit holding the delivery's rows.
   */
  insert(
    channel: string,
    messages: readonly InboundMessage[],
    rejected: readonly RejectedMessage[] = [],
    traceParent?: string,
  ): Promise<InsertCounts> {
    const delivery = { channel, messages, rejected, traceParent };
    if (this.groupCommit !== undefined) {
      return this.groupCommit.submit(delivery).then(resultOrThrow);
    }
    return this.insertDeliveries([delivery]).then((counts) => counts[0] as InsertCounts);
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
    const inserted = await this.sql<{ channel: string; message_id: string; status: string }[]>`
      INSERT INTO messaging.inbox
        (channel, message_id, account_id, sender, message_type, message, status, last_error, trace_parent)
      SELECT r->>'channel', r->>'key', r->>'accountId', r->>'from', r->>'type', r->'message', r->>'status',
             r->>'reason', r->>'traceParent'
      FROM jsonb_array_elements(${jsonForPostgres(rows)}::text::jsonb) AS r
      ON CONFLICT (channel, message_id) DO NOTHING
      RETURNING channel, message_id, status, pg_notify(${INBOX_NOTIFY_CHANNEL}, channel)
    `;
    for (const row of inserted) {
      const delivery = counts[owner.get(rowKey(row.channel, row.message_id)) ?? -1];
      if (delivery === undefined) throw new Error(`inbox returned a row it was not given: ${row.message_id}`);
      if (row.status === "pending") delivery.received++;
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
  async claim(channel: string, limit: number, leaseMs: number): Promise<ClaimedMessage[]> {
    await this.ready();
    const rows = await this.sql<ClaimRow[]>`
      UPDATE messaging.inbox AS i
      SET status = 'processing',
          attempts = i.attempts + 1,
          lease_id = gen_random_uuid(),
          next_attempt_at = now() + ${leaseMs}::double precision * interval '1 millisecond',
          updated_at = now()
      FROM (
        SELECT channel, message_id FROM messaging.inbox
        WHERE channel = ${channel} AND status IN ('pending', 'processing') AND next_attempt_at <= now()
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) AS due
      WHERE i.channel = due.channel AND i.message_id = due.message_id
      RETURNING i.channel, i.message_id, i.lease_id, i.attempts, i.message, i.reply_parts, i.parts_sent,
                i.last_error, i.trace_parent, set_config('synchronous_commit', 'off', true)
    `;
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
      SELECT channel, message_id, account_id, sender AS "from", message_type AS "type", status, attempts,
             last_error, received_at, updated_at
      FROM messaging.inbox
      WHERE channel = ${channel} ${status === undefined ? this.sql`` : this.sql`AND status = ${status}`}
      ORDER BY received_at DESC, message_id
      LIMIT ${limit}
    `;
  }

  /** The assignment that extends a lease by `leaseMs` from now. */
  private leaseFor(leaseMs: number): ReturnType<Sql> {
    return this.sql`next_attempt_at = now() + ${leaseMs}::double precision * interval '1 millisecond'`;
  }

  /** Applies `assignments` to the row while `lease` still holds it; resolves once committed. */
  private async updateLeased(lease: ClaimedMessage, assignments: ReturnType<Sql>): Promise<boolean> {
    const update = { lease, assignments };
    if (this.updateCommit === undefined) return (await leasedUpdate(this.sql, update)).length === 1;
    return this.updateCommit.submit(update).then(resultOrThrow);
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
  status: "pending" | "rejected";
  reason: string | null;
  traceParent?: string | undefined;
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
      status: "pending" as const,
      reason: null,
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
