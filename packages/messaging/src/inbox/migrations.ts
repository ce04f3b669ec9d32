import type { Migration } from "@agent-platform/migrator";

/** Schema of the inbox, versioned on its own: the platform schema's version is the operator's business. */
export const INBOX_SCHEMA = "messaging";
export const INBOX_HISTORY_TABLE = "inbox_schema_history";

/**
 * One conversation in order, erasure by conversation, retention by age. The new columns are nullable without a
 * default, so adding them does not rewrite a large table; rows stored before this version have no session id and
 * are handled unordered, as before. The status constraint is validated after it is added (no write lock held
 * while the table is scanned). `notice` rows (an event about the conversation, never answered) are recorded as
 * such instead of going through a worker.
 */
const CONVERSATIONS = `
  -- the conversation (the id handed to the agent), the chat product's stamp, and the arrival order
  ALTER TABLE messaging.inbox ADD COLUMN session_id text, ADD COLUMN sent_at timestamptz, ADD COLUMN seq bigint;
  CREATE SEQUENCE messaging.inbox_seq;
  ALTER TABLE messaging.inbox DROP CONSTRAINT inbox_status_check;
  ALTER TABLE messaging.inbox ADD CONSTRAINT inbox_status_check
    CHECK (status IN ('pending', 'processing', 'done', 'failed', 'rejected', 'notice')) NOT VALID;
  ALTER TABLE messaging.inbox VALIDATE CONSTRAINT inbox_status_check;
  -- the claim's check for an earlier unfinished message of the same conversation
  CREATE INDEX inbox_conversation_idx ON messaging.inbox (channel, session_id, sent_at, seq)
    WHERE status IN ('pending', 'processing');
  -- erasure of one conversation
  CREATE INDEX inbox_session_idx ON messaging.inbox (channel, session_id);
  -- retention: finished rows by age
  CREATE INDEX inbox_finished_idx ON messaging.inbox (channel, status, updated_at)
    WHERE status IN ('done', 'failed', 'rejected', 'notice');
`;

/**
 * Send pacing shared by every process: one row per permit of a limit (a chat: 1, an account: its messages a
 * second), with the time it is free again and the send holding it. Small (one row per chat ever answered and per
 * account permit) and only ever updated by key.
 */
const SEND_PACE = `
  CREATE TABLE messaging.send_pace (
    key     text        NOT NULL,
    slot    integer     NOT NULL,
    free_at timestamptz NOT NULL,
    holder  uuid,
    PRIMARY KEY (key, slot)
  );
`;

// Each migration's `checksum` is the one earlier migrator builds recorded for it (a hash of its compiled
// code), so databases they migrated keep matching and an edit still cannot slip through unnoticed: an
// applied migration is never edited, a change is a new migration with a checksum of its own.
export const inboxMigrations: readonly Migration[] = [
  {
    version: "1.0.0",
    name: "inbox",
    checksum: "665aa7c36849070f84a5dbc1a6c3751acb0d4a646a3145ae973f0631bf242fd8",
    async up({ sql }) {
      await sql.unsafe(`
        CREATE SCHEMA IF NOT EXISTS messaging;
        CREATE TABLE messaging.inbox (
          channel         text        NOT NULL,
          message_id      text        NOT NULL,
          account_id      text        NOT NULL,
          sender          text        NOT NULL,
          message_type    text        NOT NULL,
          message         jsonb       NOT NULL,
          status          text        NOT NULL DEFAULT 'pending'
                                      CHECK (status IN ('pending', 'processing', 'done', 'failed')),
          attempts        integer     NOT NULL DEFAULT 0,
          -- pending: when the row is due; processing: when the lease expires and the row can be reclaimed
          next_attempt_at timestamptz NOT NULL DEFAULT now(),
          lease_id        uuid,
          -- the agent's answer split into parts, saved before the first part is sent so a retry resends
          -- exactly the parts not yet accepted instead of asking the agent again
          reply_parts     jsonb,
          parts_sent      integer     NOT NULL DEFAULT 0,
          last_error      text,
          received_at     timestamptz NOT NULL DEFAULT now(),
          updated_at      timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (channel, message_id)
        );
        CREATE INDEX inbox_due_idx ON messaging.inbox (channel, next_attempt_at)
          WHERE status IN ('pending', 'processing');
        CREATE INDEX inbox_status_idx ON messaging.inbox (channel, status, received_at);
      `);
    },
    async down({ sql }) {
      await sql.unsafe("DROP TABLE messaging.inbox");
    },
  },
  {
    version: "1.1.0",
    name: "rejected_status",
    checksum: "8511bf22b96dfd02c3bda1015d9e0b2979e1cb24120076faa6611acb60779f52",
    // Messages that break the per-message limits are recorded as `rejected` rows, never claimed by a worker.
    async up({ sql }) {
      await sql.unsafe(`
        ALTER TABLE messaging.inbox DROP CONSTRAINT inbox_status_check;
        ALTER TABLE messaging.inbox ADD CONSTRAINT inbox_status_check
          CHECK (status IN ('pending', 'processing', 'done', 'failed', 'rejected'));
      `);
    },
    async down({ sql }) {
      await sql.unsafe(`
        DELETE FROM messaging.inbox WHERE status = 'rejected';
        ALTER TABLE messaging.inbox DROP CONSTRAINT inbox_status_check;
        ALTER TABLE messaging.inbox ADD CONSTRAINT inbox_status_check
          CHECK (status IN ('pending', 'processing', 'done', 'failed'));
      `);
    },
  },
  {
    version: "1.2.0",
    name: "conversations",
    source: CONVERSATIONS,
    async up({ sql }) {
      await sql.unsafe(CONVERSATIONS);
    },
    async down({ sql }) {
      await sql.unsafe(`
        DELETE FROM messaging.inbox WHERE status = 'notice';
        DROP INDEX messaging.inbox_conversation_idx;
        DROP INDEX messaging.inbox_session_idx;
        DROP INDEX messaging.inbox_finished_idx;
        ALTER TABLE messaging.inbox DROP COLUMN session_id, DROP COLUMN sent_at, DROP COLUMN seq;
        DROP SEQUENCE messaging.inbox_seq;
        ALTER TABLE messaging.inbox DROP CONSTRAINT inbox_status_check;
        ALTER TABLE messaging.inbox ADD CONSTRAINT inbox_status_check
          CHECK (status IN ('pending', 'processing', 'done', 'failed', 'rejected'));
      `);
    },
  },
  {
    version: "1.3.0",
    name: "trace_parent",
    checksum: "ac13b73985abf090251e089574d533bd6b4e6a31f88fd2768f74ac1bfa0c35eb",
    // The W3C traceparent of the webhook span that stored the row (null without tracing), so the worker's spans,
    // later and maybe in another process, link to the delivery. Nullable: no rewrite of existing rows.
    async up({ sql }) {
      await sql.unsafe("ALTER TABLE messaging.inbox ADD COLUMN trace_parent text");
    },
    async down({ sql }) {
      await sql.unsafe("ALTER TABLE messaging.inbox DROP COLUMN trace_parent");
    },
  },
  {
    version: "1.4.0",
    name: "send_pace",
    source: SEND_PACE,
    async up({ sql }) {
      await sql.unsafe(SEND_PACE);
    },
    async down({ sql }) {
      await sql.unsafe("DROP TABLE messaging.send_pace");
    },
  },
];
