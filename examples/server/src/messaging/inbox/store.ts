import type { Sql } from "postgres";
import type { InboundMessage } from "../channel.js";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.js";
import { INBOX_NOTIFY_CHANNEL } from "./wakeup.js";

export const INBOX_STATUSES = ["pending", "processing", "done", "failed"] as const;
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

/** What storing one delivery found: messages newly stored, and messages already in the inbox. */
export interface InsertCounts {
  received: number;
  duplicates: number;
}

/** One delivery's messages, all stored or none. */
export interface DeliveryWrite {
  channel: string;
  messages: InboundMessage[];
}

/** Bounds of the group commit on the acknowledgement path (see GroupCommitOptions). */
export type GroupCommitBounds = Pick<
  GroupCommitOptions<DeliveryWrite, InsertCounts>,
  "maxBatchSize" | "maxInFlight" | "maxWaitMs"
>;

/**
 * The durable inbox in the platform database. All times are the database's clock, so several server
 * processes agree on what is due and which leases have expired.
 */
export class InboxStore {
  private schemaReady: Promise<void> | undefined;
  private readonly groupCommit: GroupCommit<DeliveryWrite, InsertCounts> | undefined;

  /**
   * `prepareSchema` (the inbox migrations) runs before the first operation and again after a failure, so
   * a database that is down at startup delays the inbox instead of stopping the server. With `groupCommit`,
   * deliveries that arrive while earlier ones are being committed share the next commit; without it each
   * delivery has a statement of its own.
   */
  constructor(
    private readonly sql: Sql,
    private readonly prepareSchema: () => Promise<void> = async () => {},
    groupCommit?: GroupCommitBounds,
  ) {
    if (groupCommit !== undefined) {
      this.groupCommit = new GroupCommit({
        ...groupCommit,
        commit: (deliveries) => this.insertDeliveries(deliveries),
        sizeOf: (delivery) => delivery.messages.length,
      });
    }
  }

  /** Resolves once the inbox tables exist; rejects (and retries on the next call) while they cannot. */
  ready(): Promise<void> {
    this.schemaReady ??= this.prepareSchema().catch((error: unknown) => {
      this.schemaReady = undefined;
      throw error;
    });
    return this.schemaReady;
  }

  /**
   * Stores every message of one delivery, all of them or none (one statement, one transaction), possibly
   * in a commit shared with other deliveries. A message id already in the inbox is skipped and counted as
   * a duplicate. Resolves only after the commit holding the delivery's rows.
   */
  insert(channel: string, messages: InboundMessage[]): Promise<InsertCounts> {
    const delivery = { channel, messages };
    if (this.groupCommit !== undefined) return this.groupCommit.submit(delivery);
    return this.insertDeliveries([delivery]).then((counts) => counts[0] as InsertCounts);
  }

  /**
   * Stores several deliveries in one statement and returns each one's counts, in order. A message id that
   * occurs more than once (in the inbox, in another delivery of the batch, or twice in one delivery) is
   * received by its first occurrence in batch order and a duplicate everywhere else. New rows wake the
   * workers of every process (NOTIFY, sent at commit).
   */
  async insertDeliveries(deliveries: DeliveryWrite[]): Promise<InsertCounts[]> {
    await this.ready();
    // The first occurrence of each (channel, id) in batch order is the one written and may be received.
    const owner = new Map<string, number>();
    const rows: DeliveryWrite[] = [];
    deliveries.forEach((delivery, index) => {
      const fresh: InboundMessage[] = [];
      for (const message of delivery.messages) {
        const key = rowKey(delivery.channel, message.id);
        if (owner.has(key)) continue;
        owner.set(key, index);
        fresh.push(message);
      }
      if (fresh.length > 0) rows.push({ channel: delivery.channel, messages: fresh });
    });
    const counts = deliveries.map((delivery) => ({ received: 0, duplicates: delivery.messages.length }));
    if (rows.length === 0) return counts;
    const inserted = await this.sql<{ channel: string; message_id: string }[]>`
      INSERT INTO messaging.inbox (channel, message_id, account_id, sender, message_type, message)
      SELECT d->>'channel', m->>'id', m->>'accountId', m->>'from', m->>'type', m
      FROM jsonb_array_elements(${JSON.stringify(rows, withoutNul)}::text::jsonb) AS d,
           jsonb_array_elements(d->'messages') AS m
      ON CONFLICT (channel, message_id) DO NOTHING
      RETURNING channel, message_id, pg_notify(${INBOX_NOTIFY_CHANNEL}, channel)
    `;
    for (const row of inserted) {
      const index = owner.get(rowKey(row.channel, row.message_id));
      const delivery = index === undefined ? undefined : counts[index];
      if (delivery === undefined) throw new Error(`inbox returned a row it was not given: ${row.message_id}`);
      delivery.received++;
      delivery.duplicates--;
    }
    return counts;
  }

  /**
   * Leases up to `limit` due rows of `channel`: pending rows whose retry time has come and processing rows whose lease
   * expired (their worker died). SKIP LOCKED lets concurrent workers take disjoint rows without waiting.
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
                i.last_error
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
    }));
  }

  /** Saves the reply before sending it; also renews the lease. False when the lease was lost. */
  async saveReply(lease: ClaimedMessage, parts: string[], leaseMs: number): Promise<boolean> {
    return this.updateLeased(
      lease,
      this.sql`reply_parts = ${JSON.stringify(parts, withoutNul)}::text::jsonb,
               next_attempt_at = now() + ${leaseMs}::double precision * interval '1 millisecond'`,
    );
  }

  /** Records that the first `partsSent` parts were accepted; also renews the lease. */
  async markPartsSent(lease: ClaimedMessage, partsSent: number, leaseMs: number): Promise<boolean> {
    return this.updateLeased(
      lease,
      this
        .sql`parts_sent = ${partsSent}, next_attempt_at = now() + ${leaseMs}::double precision * interval '1 millisecond'`,
    );
  }

  async markDone(lease: ClaimedMessage): Promise<boolean> {
    return this.updateLeased(lease, this.sql`status = 'done', lease_id = NULL`);
  }

  async retryLater(lease: ClaimedMessage, error: string, delayMs: number): Promise<boolean> {
    return this.updateLeased(
      lease,
      this.sql`status = 'pending', lease_id = NULL, last_error = ${error},
               next_attempt_at = now() + ${delayMs}::double precision * interval '1 millisecond'`,
    );
  }

  async markFailed(lease: ClaimedMessage, error: string): Promise<boolean> {
    return this.updateLeased(lease, this.sql`status = 'failed', lease_id = NULL, last_error = ${error}`);
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

  private async updateLeased(lease: ClaimedMessage, assignments: ReturnType<Sql>): Promise<boolean> {
    const rows = await this.sql`
      UPDATE messaging.inbox SET ${assignments}, updated_at = now()
      WHERE channel = ${lease.channel} AND message_id = ${lease.messageId}
        AND lease_id = ${lease.leaseId} AND status = 'processing'
      RETURNING 1
    `;
    return rows.length === 1;
  }
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
}

/** A row's primary key as the database stores it (see withoutNul), so returned rows map back to their owner. */
function rowKey(channel: string, messageId: string): string {
  return JSON.stringify([withoutNul("", channel), withoutNul("", messageId)]);
}

/**
 * PostgreSQL's jsonb cannot hold U+0000; a message containing it would be refused with 503 on every
 * redelivery (and a reply containing it could never be saved), so U+FFFD is stored instead.
 */
function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === "string" ? value.replaceAll("\u0000", "\uFFFD") : value;
}
