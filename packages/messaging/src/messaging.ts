import type { IncomingMessage } from "node:http";
import type { Logger } from "@agent-platform/common";
import { configError, loggerOption } from "@agent-platform/common/internal";
import type { Sql } from "postgres";
import type { AgentHandler } from "./agents/agent.js";
import { echoAgent } from "./agents/echo.js";
import type { Channel } from "./channel.js";
import { PayloadTooLargeError } from "./errors.js";
import { migrateInbox } from "./inbox/schema.js";
import { type InboxEntry, type InboxStatus, InboxStore } from "./inbox/store.js";
import { InboxWakeup } from "./inbox/wakeup.js";
import { InboxWorker } from "./inbox/worker.js";
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
  /** After this, a message claimed by a worker that died is claimed again. Default 180,000 ms. */
  leaseMs?: number;
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
}

/** Options of `createMessaging`. */
export interface MessagingOptions {
  /** The database of the inbox (schema `messaging`, migrated on first use). */
  sql: Sql;
  /** The configured channels, e.g. `[whatsapp({...})]`; may be empty. */
  channels: readonly Channel[];
  /** Answers each message. Default: the echo agent. */
  agent?: AgentHandler;
  logger?: Logger;
  worker?: WorkerOptions;
  commit?: CommitOptions;
  /**
   * LISTEN for the rows other processes commit, on a connection of its own, so this process's workers
   * wake at once instead of at their next poll. For a PostgreSQL shared by several processes; default
   * false (a single process wakes its own workers after each delivery, and an embedded PGlite served over
   * a one-connection socket has no connection to spare).
   */
  listen?: boolean;
}

/** The durable inbox `createMessaging` returns: webhook handlers, the inbox, the workers. */
export interface Messaging {
  /** Names of the configured channels. */
  readonly channels: readonly string[];
  /** A webhook request as a Fetch `Request` (body read up to 1 MiB; 413 beyond). */
  fetch(
    channel: string,
    request: Request,
    options?: { incoming?: IncomingMessage | undefined },
  ): Promise<Response>;
  /** A webhook request whose raw body the caller has already read (Express, plain Node). */
  handle(channel: string, request: WebhookRequest): Promise<WebhookResponse>;
  /** Inbox rows of a channel, newest first (the content stays in the database). */
  inbox(channel: string, query?: { status?: InboxStatus | undefined; limit?: number }): Promise<InboxEntry[]>;
  /** Starts the workers; call once the webhook is served. */
  start(): void;
  /** Stops claiming and waits for the messages in flight. */
  stop(): Promise<void>;
}

const COMMIT_DEFAULTS: Required<CommitOptions> = { maxBatch: 256, maxWaitMs: 2_000 };

/**
 * Shared commits in flight at once. One: the deliveries arriving while it waits for its WAL flush gather into
 * the next batch, where a second commit in flight would only split them into more round trips (measured in
 * bench/notes/profiles.md, "Why the code is as it is"). A lone delivery still commits at once.
 */
const COMMITS_IN_FLIGHT = 1;

const WORKER_DEFAULTS: Required<WorkerOptions> = {
  concurrency: 4,
  pollMs: 1_000,
  startDelayMs: 0,
  maxAttempts: 8,
  retryBaseMs: 2_000,
  retryMaxMs: 300_000,
  leaseMs: 180_000,
};

/**
 * The durable inbox for `channels`: their webhooks commit every message before answering 200, and one
 * worker per channel answers each message once, across crashes and processes sharing the database. The
 * inbox schema is migrated now or, when the database is down, on the first delivery.
 */
export async function createMessaging(options: MessagingOptions): Promise<Messaging> {
  const logger = loggerOption(options.logger, "messaging");
  const worker = { ...WORKER_DEFAULTS, ...definedOnly(options.worker ?? {}) };
  const byName = new Map<string, Channel>();
  for (const channel of options.channels) {
    if (byName.has(channel.name)) throw configError("messaging", `channel '${channel.name}' is given twice`);
    byName.set(channel.name, channel);
  }
  const commit = { ...COMMIT_DEFAULTS, ...definedOnly(options.commit ?? {}) };
  const store = new InboxStore(
    options.sql,
    () => migrateInbox(options.sql, logger),
    commit.maxBatch === 1
      ? undefined
      : { maxBatchSize: commit.maxBatch, maxInFlight: COMMITS_IN_FLIGHT, maxWaitMs: commit.maxWaitMs },
  );
  if (byName.size > 0) {
    await store.ready().catch((error: unknown) => {
      // Like a server, the inbox starts with its database down; the webhook answers 503 meanwhile.
      logger.error({ err: error }, "inbox schema not ready; retried on the next delivery");
    });
  }
  const agent = options.agent ?? echoAgent;
  const workers = new Map(
    [...byName.values()].map((channel) => [
      channel.name,
      new InboxWorker({ store, channel, agent, logger: logger.child({ channel: channel.name }), ...worker }),
    ]),
  );

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
      let webhookRequest: WebhookRequest;
      try {
        webhookRequest = await readWebhookRequest(request, fetchOptions.incoming);
      } catch (error) {
        if (!(error instanceof PayloadTooLargeError)) throw error;
        return Response.json(
          { detail: `Request body exceeds ${MAX_WEBHOOK_BODY_BYTES} bytes`, error_code: "PAYLOAD_TOO_LARGE" },
          { status: 413 },
        );
      }
      const response = await handle(name, webhookRequest);
      return new Response(response.body, {
        status: response.status,
        headers: { "content-type": `${response.contentType}; charset=UTF-8` },
      });
    },
    async inbox(name, query = {}) {
      webhookOf(name);
      try {
        return await store.list(name, query.status, query.limit ?? 100);
      } catch (error) {
        logger.error({ err: error, channel: name }, "inbox listing failed");
        throw error;
      }
    },
    start() {
      for (const each of workers.values()) each.start();
      void wakeup?.start();
    },
    async stop() {
      await wakeup?.close();
      await Promise.all([...workers.values()].map((each) => each.stop()));
    },
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}
