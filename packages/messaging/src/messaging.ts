import type { IncomingMessage } from "node:http";
import type { Logger, LoggerOption } from "@agent-platform/common";
import { configError, loggerOption } from "@agent-platform/common/internal";
import type { Sql } from "postgres";
import type { AgentHandler } from "./agents/agent.js";
import { echoAgent } from "./agents/echo.js";
import { BodyBudget } from "./body-budget.js";
import type { Channel } from "./channel.js";
import {
  BodiesBusyError,
  BodyTimeoutError,
  InboxMessageNotFoundError,
  InboxStatusConflictError,
  PayloadTooLargeError,
} from "./errors.js";
import { Retention } from "./inbox/retention.js";
import { migrateInbox } from "./inbox/schema.js";
import { SendPace } from "./inbox/send-pace.js";
import {
  type InboxEntry,
  type InboxStats,
  type InboxStatus,
  InboxStore,
  type InboxStoreCheck,
} from "./inbox/store.js";
import { InboxWakeup } from "./inbox/wakeup.js";
import { InboxWorker } from "./inbox/worker.js";
import { ENVIRONMENTS, type Environment, OptionChecks, optionsObject } from "./options.js";
import {
  handleWebhook,
  MAX_WEBHOOK_BODY_BYTES,
  readWebhookRequest,
  type WebhookDeps,
  type WebhookRequest,
  type WebhookResponse,
} from "./webhook.js";

/** How each channel's worker drains the inbox. Every field has a default. */
export interface WorkerOptions {
  /** Messages handled at once per channel and process. Default 4. */
  concurrency?: number;
  /** How often to look for due messages besides the wake-up after a delivery. Default 1,000 ms. */
  pollMs?: number;
  /** Delay before the first claim. Default 0. */
  startDelayMs?: number;
  /** Attempts before a message is marked failed. Default 8. */
  maxAttempts?: number;
  /** Exponential backoff between attempts, with jitter. Defaults 2,000 / 300,000 ms. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * After this, a message claimed by a worker that died is claimed again. Default 180,000 ms. Must be
   * longer than every call a worker makes holding it: each channel's send and the agent's `timeoutMs`.
   */
  leaseMs?: number;
  /**
   * `"conversation"` (default): the messages of one conversation (the channel's session id) reach the agent one
   * at a time, in the order the chat product stamped them (then arrival), across every process sharing the
   * database; a later one waits while an earlier one is pending, processing or waiting for a retry, and goes once
   * it is `done` or `failed`. Different conversations still run in parallel. `"none"`: any due message, in any order.
   */
  ordering?: WorkerOrdering;
}

/** The orders `worker.ordering` accepts. */
export const WORKER_ORDERINGS = ["conversation", "none"] as const;
/** One of `WORKER_ORDERINGS`. */
export type WorkerOrdering = (typeof WORKER_ORDERINGS)[number];

/** How long finished inbox rows are kept; every field has a default. `0` keeps them forever. */
export interface RetentionOptions {
  /** `done`, `rejected` and `notice` rows, days after they were last updated. Default 30. */
  doneDays?: number;
  /** `failed` rows, days after they failed. Default 90. */
  failedDays?: number;
}

/** `retry`'s answer for a batch: the ids put back to `pending`, oldest first. */
export interface InboxRetried {
  retried: number;
  message_ids: string[];
}

/**
 * The inbox of each channel, for operators and apps without Hono. Called as a function it lists rows (as
 * `list`). Every method throws a ConfigError for a channel that is not configured.
 */
export interface MessagingInbox {
  (channel: string, query?: { status?: InboxStatus | undefined; limit?: number }): Promise<InboxEntry[]>;
  /** Inbox rows of a channel, newest first (the content stays in the database). */
  list(channel: string, query?: { status?: InboxStatus | undefined; limit?: number }): Promise<InboxEntry[]>;
  /** Rows by status and the age of the oldest pending one. */
  stats(channel: string): Promise<InboxStats>;
  /**
   * A `failed` message back to `pending`, attempts reset; the reply parts already sent are not sent again.
   * Throws InboxMessageNotFoundError for an unknown id, InboxStatusConflictError for a row not `failed`.
   */
  retry(channel: string, messageId: string): Promise<InboxEntry>;
  /** Up to `limit` (default 100, at most 1,000) failed messages back to `pending`, oldest first. */
  retry(channel: string, query: { status: "failed"; limit?: number }): Promise<InboxRetried>;
  /**
   * Deletes every row of one conversation (the channel's session id, e.g. `whatsapp:<phone number id>:<sender>`),
   * with its text and reply; a message being answered is not answered further. Returns how many rows went.
   */
  erase(channel: string, sessionId: string): Promise<number>;
}

/** How the webhooks commit deliveries to the inbox, and the workers their updates. Every field has a default. */
export interface CommitOptions {
  /**
   * Most messages (or worker updates) in one shared commit: deliveries that arrive while commits are in flight
   * are written together in the next one (group commit), and so are the workers' updates of their leased rows.
   * 1 gives every delivery and every update a commit of its own. Default 256.
   */
  maxBatch?: number;
  /**
   * Longest a delivery waits for its commit to start; then 503, nothing stored. A worker's update that waits this
   * long fails like any failed write. Default 2,000 ms.
   */
  maxWaitMs?: number;
  /**
   * Longest a commit (shared or not) and a worker's update may take once started; then the delivery is answered
   * 503 and the worker's update fails like any failed write. A database that was killed, frozen or cut off
   * answers nothing and its connection may take minutes to notice: a delivery is answered within
   * `maxWaitMs + timeoutMs` whatever the database does. The abandoned write may still commit; a redelivery then
   * finds its messages stored (duplicates, never losses). Default 3,000 ms.
   */
  timeoutMs?: number;
}

/**
 * How the webhooks read request bodies (`fetch`; `handle` gets bodies its caller read). Every field has a
 * default. A body late by a deadline is answered 408 and its connection closed; one the budget cannot hold, 503.
 */
export interface BodyOptions {
  /** The whole body must arrive within this, counted from the start of the read. Default 10,000 ms. */
  timeoutMs?: number;
  /** The longest gap between two pieces of a body (a stalled or dribbling client). Default 5,000 ms. */
  idleTimeoutMs?: number;
  /**
   * The memory all bodies being read or handled may hold together, charged by their declared Content-Length
   * (chunked ones as their bytes arrive); past it a body is refused with 503. Bodies over 64 KiB share three
   * quarters of it, so small deliveries still get through while large ones fill it. Default 32 MiB.
   */
  maxPendingBytes?: number;
}

/** Options of `createMessaging`. */
export interface MessagingOptions {
  /** The database of the inbox (schema `messaging`, migrated on first use). */
  sql: Sql;
  /** The configured channels, e.g. `[whatsapp({...})]`; may be empty. */
  channels: readonly Channel[];
  /** Answers each message. Default: the echo agent. */
  agent?: AgentHandler;
  logger?: LoggerOption | undefined;
  worker?: WorkerOptions;
  commit?: CommitOptions;
  body?: BodyOptions;
  /** How long finished rows are kept; the workers delete older ones in small batches, at least once a minute. */
  retention?: RetentionOptions;
  /**
   * LISTEN for the rows other processes commit, on a connection of its own, so this process's workers
   * wake at once instead of at their next poll. For a PostgreSQL shared by several processes; default
   * false (a single process wakes its own workers after each delivery, and an embedded PGlite served over
   * a one-connection socket has no connection to spare).
   */
  listen?: boolean;
  /**
   * Default `"production"`: a channel that cannot authenticate its requests (WhatsApp's
   * `skipSignatureValidation`, Telegram's `allowUnauthenticated`) is refused. Outside production it is
   * allowed, with a warning logged.
   */
  environment?: Environment | undefined;
}

/** The durable inbox `createMessaging` returns: webhook handlers, the inbox, the workers. */
export interface Messaging {
  /** Names of the configured channels. */
  readonly channels: readonly string[];
  /**
   * A webhook request as a Fetch `Request`: its body read up to 1 MiB (413 beyond) under the `body` options
   * (408 when late, 503 when the bodies being read hold the whole budget).
   */
  fetch(
    channel: string,
    request: Request,
    options?: { incoming?: IncomingMessage | undefined },
  ): Promise<Response>;
  /** A webhook request whose raw body the caller has already read (Express, plain Node). */
  handle(channel: string, request: WebhookRequest): Promise<WebhookResponse>;
  /** The inbox: rows, counts, retries, erasure (see MessagingInbox); called as a function, the rows. */
  readonly inbox: MessagingInbox;
  /** Starts the workers; call once the webhook is served. */
  start(): void;
  /**
   * Stops claiming and waits for the messages in flight. When `options.signal` aborts first (a shutdown
   * deadline), the agent and channel calls in flight are aborted and, a second later at most, stop resolves:
   * their messages stay leased and are answered once the lease expires (after a restart, say), each once.
   */
  stop(options?: { signal?: AbortSignal | undefined }): Promise<void>;
  /**
   * Whether the inbox can store a delivery now: its tables are there (with a channel configured) and the database
   * answers within `commit.timeoutMs` and takes writes (not read-only, not a standby, INSERT granted, a connection slot free).
   * For health and readiness checks: `{ ok: false, reason }` says why in words safe to show (no address).
   * Never rejects.
   */
  canStore(): Promise<InboxStoreCheck>;
}

/**
 * Shared commits in flight at once. One: the deliveries arriving while it waits for its WAL flush gather into
 * the next batch, where a second commit in flight would only split them into more round trips (measured in
 * bench/notes/profiles.md, "Why the code is as it is"). A lone delivery still commits at once.
 */
const COMMITS_IN_FLIGHT = 1;

const OPTIONS = [
  "sql",
  "channels",
  "agent",
  "logger",
  "worker",
  "commit",
  "body",
  "retention",
  "listen",
  "environment",
] as const;
const WORKER_OPTIONS = [
  "concurrency",
  "pollMs",
  "startDelayMs",
  "maxAttempts",
  "retryBaseMs",
  "retryMaxMs",
  "leaseMs",
  "ordering",
] as const;
const COMMIT_OPTIONS = ["maxBatch", "maxWaitMs", "timeoutMs"] as const;
const BODY_OPTIONS = ["timeoutMs", "idleTimeoutMs", "maxPendingBytes"] as const;
const RETENTION_OPTIONS = ["doneDays", "failedDays"] as const;

/** Between retention passes: at least once a minute. */
const RETENTION_INTERVAL_MS = 60_000;
/**
 * Rows per retention DELETE, the longest one may run, and the shortest cycle of one batch: at most 1,000 rows a
 * second per process, five times the 12,000 a minute that 200 new messages a second bring, while the WAL of the
 * deletions leaves room for the webhooks' commits (bench: retention under load).
 */
const RETENTION_BATCH = 200;
const RETENTION_STATEMENT_TIMEOUT_MS = 5_000;
const RETENTION_BATCH_INTERVAL_MS = 200;
/** Longest one retention pass runs, so a first pass over a year of rows does not hold a connection for long. */
const RETENTION_PASS_MS = 40_000;
/** The longest a chat product redelivers an unacknowledged webhook (WhatsApp: up to 7 days). */
const REDELIVERY_DAYS = 7;
/** Most rows one batch retry puts back. */
const MAX_RETRY_BATCH = 1_000;

interface CheckedOptions {
  worker: Required<WorkerOptions>;
  commit: Required<CommitOptions>;
  body: Required<BodyOptions>;
  retention: Required<RetentionOptions>;
  channels: Map<string, Channel>;
  environment: Environment;
}

/**
 * Every option of createMessaging checked in one place, each problem naming its option, all thrown as
 * one ConfigError: a worker `concurrency: 0` would claim with LIMIT 0 and loop without sleeping, a
 * `pollMs` past a timer's range fires at once, and a lease that a send or the agent call outlasts lets
 * a second worker answer the same message.
 */
function checkOptions(options: MessagingOptions): CheckedOptions {
  const checks = new OptionChecks("createMessaging");
  const given = optionsObject(checks, "options", options);
  checks.knownKeys("", given, OPTIONS);
  if (typeof given.sql !== "function") checks.problem("sql", "must be a postgres.js `sql` instance");
  if (given.agent !== undefined && typeof given.agent !== "function") {
    checks.problem("agent", "must be a function (see AgentHandler)");
  }
  if (given.listen !== undefined) checks.boolean("listen", given.listen);
  const environment = checks.oneOf("environment", given.environment, ENVIRONMENTS, "production");

  const channels = new Map<string, Channel>();
  if (!Array.isArray(given.channels)) checks.problem("channels", "must be an array of channels");
  for (const [index, channel] of ((given.channels ?? []) as unknown[]).entries()) {
    const name = (channel as Channel | null)?.name;
    if (typeof name !== "string" || name === "") {
      checks.problem(`channels[${index}]`, "is not a channel (see whatsapp(), slack(), telegram())");
    } else if (channels.has(name)) {
      checks.problem(`channels[${index}]`, `is channel '${name}' again`);
    } else {
      channels.set(name, channel as Channel);
    }
  }

  const w = optionsObject(checks, "worker", given.worker);
  checks.knownKeys("worker.", w, WORKER_OPTIONS);
  const retryBaseMs = checks.integer("worker.retryBaseMs", w.retryBaseMs, 2_000, 0);
  const worker: Required<WorkerOptions> = {
    concurrency: checks.integer("worker.concurrency", w.concurrency, 4, 1, 1_024),
    // At least 10 ms: a shorter poll makes an idle worker query the database in a busy loop.
    pollMs: checks.integer("worker.pollMs", w.pollMs, 1_000, 10),
    startDelayMs: checks.integer("worker.startDelayMs", w.startDelayMs, 0, 0),
    maxAttempts: checks.integer("worker.maxAttempts", w.maxAttempts, 8, 1, 1_000),
    retryBaseMs,
    retryMaxMs: checks.integer(
      "worker.retryMaxMs",
      w.retryMaxMs,
      Math.max(300_000, retryBaseMs),
      retryBaseMs,
    ),
    leaseMs: checks.integer("worker.leaseMs", w.leaseMs, 180_000, 1_000),
    ordering: checks.oneOf("worker.ordering", w.ordering, WORKER_ORDERINGS, "conversation"),
  };
  const calls: [string, number | undefined][] = [
    ...[...channels.values()].map((channel): [string, number | undefined] => [
      `the ${channel.name} channel's apiTimeoutMs`,
      channel.sendTimeoutMs,
    ]),
    ["the agent's timeoutMs", (given.agent as AgentHandler | undefined)?.timeoutMs],
  ];
  for (const [call, timeoutMs] of calls) {
    if (timeoutMs !== undefined && timeoutMs >= worker.leaseMs) {
      checks.problem(
        "worker.leaseMs",
        `(${worker.leaseMs}) must be longer than ${call} (${timeoutMs}): a lease that runs out during the call lets another worker answer the message again`,
      );
    }
  }

  const c = optionsObject(checks, "commit", given.commit);
  checks.knownKeys("commit.", c, COMMIT_OPTIONS);
  const commit: Required<CommitOptions> = {
    maxBatch: checks.integer("commit.maxBatch", c.maxBatch, 256, 1, 5_000),
    maxWaitMs: checks.integer("commit.maxWaitMs", c.maxWaitMs, 2_000, 1, 60_000),
    timeoutMs: checks.integer("commit.timeoutMs", c.timeoutMs, 3_000, 1, 60_000),
  };

  const b = optionsObject(checks, "body", given.body);
  checks.knownKeys("body.", b, BODY_OPTIONS);
  const body: Required<BodyOptions> = {
    timeoutMs: checks.integer("body.timeoutMs", b.timeoutMs, 10_000, 1),
    idleTimeoutMs: checks.integer("body.idleTimeoutMs", b.idleTimeoutMs, 5_000, 1),
    // At least one whole webhook body.
    maxPendingBytes: checks.integer(
      "body.maxPendingBytes",
      b.maxPendingBytes,
      32 * 1024 * 1024,
      2 * MAX_WEBHOOK_BODY_BYTES,
      Number.MAX_SAFE_INTEGER,
    ),
  };

  const r = optionsObject(checks, "retention", given.retention);
  checks.knownKeys("retention.", r, RETENTION_OPTIONS);
  // Up to 100 years: beyond, `now() - interval` leaves PostgreSQL's range of dates for nothing.
  const retention: Required<RetentionOptions> = {
    doneDays: checks.integer("retention.doneDays", r.doneDays, 30, 0, 36_500),
    failedDays: checks.integer("retention.failedDays", r.failedDays, 90, 0, 36_500),
  };

  if (environment === "production") {
    for (const channel of channels.values()) {
      if (channel.unauthenticated !== undefined) {
        checks.problem(
          channel.name,
          `${channel.unauthenticated} is refused in production: anyone could post messages. Configure its secret, or run it outside production (environment: "development")`,
        );
      }
    }
  }
  checks.done();
  return { worker, commit, body, retention, channels, environment };
}

/**
 * The durable inbox for `channels`: their webhooks commit every message before answering 200, and one
 * worker per channel answers each message once, across crashes and processes sharing the database. The
 * inbox schema is migrated now or, when the database is down, on the first delivery.
 */
export async function createMessaging(options: MessagingOptions): Promise<Messaging> {
  const logger = loggerOption(options.logger, "messaging");
  const { worker, commit, body, retention: keep, channels: byName } = checkOptions(options);
  const bodyBudget = new BodyBudget(body.maxPendingBytes);
  for (const channel of byName.values()) {
    if (channel.unauthenticated !== undefined) {
      logger.warn(
        { channel: channel.name },
        `${channel.unauthenticated}: webhook requests are NOT authenticated; anyone can post messages`,
      );
    }
  }
  // Deleting a row also forgets its message id: a redelivery after that is a new message, answered again.
  for (const [option, days] of [
    ["retention.doneDays", keep.doneDays],
    ["retention.failedDays", keep.failedDays],
  ] as const) {
    if (days > 0 && days < REDELIVERY_DAYS) {
      logger.warn(
        { option, days },
        `${option} (${days}) is shorter than the ${REDELIVERY_DAYS} days a chat product may redeliver a message whose acknowledgement it did not get (WhatsApp retries for up to 7 days): such a message, its row deleted, would be answered again. Keep ${REDELIVERY_DAYS} or more`,
      );
    }
  }
  const store = new InboxStore(
    options.sql,
    () => migrateInbox(options.sql, logger),
    commit.maxBatch === 1
      ? undefined
      : {
          maxBatchSize: commit.maxBatch,
          maxInFlight: COMMITS_IN_FLIGHT,
          maxWaitMs: commit.maxWaitMs,
          maxCommitMs: commit.timeoutMs,
        },
    commit.timeoutMs,
  );
  if (byName.size > 0) {
    await store.ready().catch((error: unknown) => {
      // Like a server, the inbox starts with its database down; the webhook answers 503 meanwhile.
      logger.error({ err: error }, "inbox schema not ready; retried on the next delivery");
    });
  }
  const agent = options.agent ?? echoAgent;
  const pace = new SendPace(options.sql);
  const workers = new Map(
    [...byName.values()].map((channel) => [
      channel.name,
      new InboxWorker({
        store,
        channel,
        agent,
        pace,
        logger: logger.child({ channel: channel.name }),
        ...worker,
      }),
    ]),
  );

  const retention = new Retention({
    store,
    channels: [...byName.keys()],
    logger,
    ...keep,
    intervalMs: RETENTION_INTERVAL_MS,
    batch: RETENTION_BATCH,
    statementTimeoutMs: RETENTION_STATEMENT_TIMEOUT_MS,
    passMs: RETENTION_PASS_MS,
    batchIntervalMs: RETENTION_BATCH_INTERVAL_MS,
  });

  const wakeup =
    options.listen === true && workers.size > 0
      ? new InboxWakeup({
          sql: options.sql,
          // undefined: notifications may have been missed while reconnecting, so every worker looks.
          onWake: (channel) => {
            for (const [name, each] of workers) if (channel === undefined || channel === name) each.notify();
          },
          logger,
          retryMs: worker.pollMs,
        })
      : undefined;

  // Made once per channel: a logger child per delivery cost as much as checking its signature.
  const webhooks = new Map<string, WebhookDeps>(
    [...byName.values()].map((channel) => [
      channel.name,
      {
        channel,
        store,
        logger: logger.child({ channel: channel.name }),
        onStored: () => workers.get(channel.name)?.notify(),
      },
    ]),
  );
  const webhookOf = (name: string): WebhookDeps => {
    const deps = webhooks.get(name);
    if (deps === undefined) throw configError("messaging", `channel '${name}' is not configured`);
    return deps;
  };
  const handle = (name: string, request: WebhookRequest) => handleWebhook(webhookOf(name), request);

  return {
    channels: [...byName.keys()],
    handle,
    async fetch(name, request, fetchOptions = {}) {
      webhookOf(name);
      const charge = bodyBudget.open();
      try {
        let webhookRequest: WebhookRequest;
        try {
          webhookRequest = await readWebhookRequest(
            request,
            {
              maxBytes: MAX_WEBHOOK_BODY_BYTES,
              timeoutMs: body.timeoutMs,
              idleTimeoutMs: body.idleTimeoutMs,
              charge,
            },
            fetchOptions.incoming,
          );
        } catch (error) {
          const refusal = bodyRefusal(error);
          if (refusal === undefined) throw error;
          return refusal;
        }
        const response = await handle(name, webhookRequest);
        return new Response(response.body, {
          status: response.status,
          headers: { "content-type": `${response.contentType}; charset=UTF-8` },
        });
      } finally {
        charge.release();
      }
    },
    inbox: inboxOperations(store, webhookOf, logger),
    start() {
      for (const each of workers.values()) each.start();
      retention.start();
      void wakeup?.start();
    },
    canStore: () => store.canStore(commit.timeoutMs, byName.size > 0),
    async stop(stopOptions = {}) {
      await wakeup?.close();
      await Promise.all([...workers.values()].map((each) => each.stop(stopOptions.signal)));
      await retention.stop();
    },
  };
}

/**
 * The answer to a body that could not be read, or undefined for an error that is not about the body. A late or
 * refused body's connection is closed: what the client still sends is not wanted.
 */
function bodyRefusal(error: unknown): Response | undefined {
  if (error instanceof PayloadTooLargeError) {
    return Response.json(
      { detail: `Request body exceeds ${MAX_WEBHOOK_BODY_BYTES} bytes`, error_code: "PAYLOAD_TOO_LARGE" },
      { status: 413 },
    );
  }
  if (error instanceof BodyTimeoutError) {
    return Response.json(
      { detail: error.message, error_code: "REQUEST_TIMEOUT" },
      { status: 408, headers: { connection: "close" } },
    );
  }
  if (error instanceof BodiesBusyError) {
    return Response.json(
      { detail: error.message, error_code: "SERVICE_UNAVAILABLE" },
      { status: 503, headers: { connection: "close", "retry-after": "5" } },
    );
  }
  return undefined;
}

/** The inbox's operations over `store`; `check` throws for a channel that is not configured. */
function inboxOperations(
  store: InboxStore,
  check: (channel: string) => unknown,
  logger: Logger,
): MessagingInbox {
  // A database failure is logged here with what was asked, then rethrown for the caller (the routes answer 503).
  const logged = async <T>(channel: string, operation: string, run: () => Promise<T>): Promise<T> => {
    check(channel);
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof InboxMessageNotFoundError || error instanceof InboxStatusConflictError)) {
        logger.error({ err: error, channel }, `inbox ${operation} failed`);
      }
      throw error;
    }
  };
  const list: MessagingInbox["list"] = (channel, query = {}) =>
    logged(channel, "listing", () => store.list(channel, query.status, query.limit ?? 100));
  async function retry(channel: string, messageId: string): Promise<InboxEntry>;
  async function retry(channel: string, query: { status: "failed"; limit?: number }): Promise<InboxRetried>;
  async function retry(
    channel: string,
    target: string | { status: "failed"; limit?: number },
  ): Promise<InboxEntry | InboxRetried> {
    if (typeof target === "string") {
      return logged(channel, "retry", async () => {
        const outcome = await store.retry(channel, target);
        if (outcome === undefined) throw new InboxMessageNotFoundError(channel, target);
        if (!outcome.retried) throw new InboxStatusConflictError(target, outcome.entry.status, "failed");
        return outcome.entry;
      });
    }
    const limit = target.limit ?? 100;
    if (target.status !== "failed" || !Number.isInteger(limit) || limit < 1 || limit > MAX_RETRY_BATCH) {
      throw configError(
        "messaging",
        `inbox.retry: status must be "failed" and limit a whole number from 1 to ${MAX_RETRY_BATCH}`,
      );
    }
    return logged(channel, "retry", async () => {
      const ids = await store.retryFailed(channel, limit);
      return { retried: ids.length, message_ids: ids };
    });
  }
  return Object.assign(list, {
    list,
    stats: (channel: string) => logged(channel, "stats", () => store.stats(channel)),
    retry,
    erase: (channel: string, sessionId: string) =>
      logged(channel, "erasure", () => store.erase(channel, sessionId)),
  });
}
