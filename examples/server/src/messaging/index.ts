import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { Sql } from "postgres";
import type { AgentHandler } from "./agents/agent.js";
import { echoAgent } from "./agents/echo.js";
import { createHttpAgent } from "./agents/http.js";
import type { MessagingConfig } from "./config.js";
import { MessagingConfigError } from "./errors.js";
import { migrateInbox } from "./inbox/schema.js";
import { InboxStore } from "./inbox/store.js";
import { InboxWakeup } from "./inbox/wakeup.js";
import { InboxWorker } from "./inbox/worker.js";
import { createMessagingRoutes } from "./routes.js";
import { createWhatsAppChannel } from "./whatsapp/channel.js";

export type { AgentHandler, AgentMessage } from "./agents/agent.js";
export type { Channel } from "./channel.js";
export { type MessagingConfig, messagingConfigSchema } from "./config.js";
export { MessagingConfigError } from "./errors.js";

export interface Messaging {
  /** Mounted at "/" by the server. */
  routes: OpenAPIHono;
  /** Paths that authenticate themselves and must be excluded from the JWT middleware. */
  publicPaths: string[];
  /** Starts the inbox worker; call after the server listens. */
  start(): void;
  /** Stops claiming and waits for the messages in flight. */
  stop(): Promise<void>;
}

export interface MessagingDeps {
  config: MessagingConfig;
  /** The platform database (`default`). */
  sql: Sql;
  logger: Logger;
  production: boolean;
  /**
   * Whether other processes may share the database (real PostgreSQL): then the worker also LISTENs for the
   * rows they store. Embedded PGlite is one process's, and its socket admits one connection, already the pool's.
   */
  sharedDatabase: boolean;
  /** Replaces the agent chosen by AGENT_URL (echo when unset). */
  agent?: AgentHandler;
}

const CHANNEL = "whatsapp";
/**
 * Shared commits in flight at once: while one waits for its WAL flush the next can be written, and the
 * deliveries arriving meanwhile still gather into batches. More would only split the batches.
 */
const COMMITS_IN_FLIGHT = 2;

/**
 * The WhatsApp channel when its variables are set (its inbox tables migrated or, with the database down,
 * migrated on first use; its worker ready to start);
 * otherwise only `GET /whatsapp/status`, saying it is not configured. Throws MessagingConfigError for a
 * partial or unsafe configuration.
 */
export async function createMessaging(deps: MessagingDeps): Promise<Messaging> {
  const { config, production } = deps;
  const logger = deps.logger.child({ channel: CHANNEL });
  const publicPaths = [`/${CHANNEL}/webhook`, `/${CHANNEL}/status`];

  const configured = [
    config.WHATSAPP_VERIFY_TOKEN,
    config.WHATSAPP_APP_SECRET,
    config.WHATSAPP_ACCESS_TOKEN,
    config.WHATSAPP_PHONE_NUMBER_ID,
  ].some((value) => value !== undefined);
  if (!configured) {
    return {
      routes: createMessagingRoutes(CHANNEL, null),
      publicPaths,
      start() {},
      async stop() {},
    };
  }

  const { accessToken, phoneNumberId, appSecret } = checkWhatsAppConfig(config, production, logger);
  const channel = createWhatsAppChannel({
    verifyToken: config.WHATSAPP_VERIFY_TOKEN,
    appSecret,
    accessToken,
    phoneNumberId,
    apiBaseUrl: config.WHATSAPP_API_BASE_URL,
    apiTimeoutMs: config.WHATSAPP_API_TIMEOUT_MS,
  });
  const store = new InboxStore(
    deps.sql,
    () => migrateInbox(deps.sql, logger),
    config.MESSAGING_COMMIT_MAX_BATCH === 1
      ? undefined
      : {
          maxBatchSize: config.MESSAGING_COMMIT_MAX_BATCH,
          maxInFlight: COMMITS_IN_FLIGHT,
          maxWaitMs: config.MESSAGING_COMMIT_MAX_WAIT_MS,
        },
  );
  await store.ready().catch((error: unknown) => {
    // Like the server itself, the channel starts with its database down; the webhook answers 503 meanwhile.
    logger.error({ err: error }, "inbox schema not ready; retried on the next delivery");
  });
  const agent =
    deps.agent ??
    (config.AGENT_URL === undefined ? echoAgent : createHttpAgent(config.AGENT_URL, config.AGENT_TIMEOUT_MS));
  const worker = new InboxWorker({
    store,
    channel,
    agent,
    logger,
    concurrency: config.MESSAGING_WORKER_CONCURRENCY,
    pollMs: config.MESSAGING_WORKER_POLL_MS,
    startDelayMs: config.MESSAGING_WORKER_START_DELAY_MS,
    maxAttempts: config.MESSAGING_MAX_ATTEMPTS,
    retryBaseMs: config.MESSAGING_RETRY_BASE_MS,
    retryMaxMs: config.MESSAGING_RETRY_MAX_MS,
    leaseMs: config.MESSAGING_VISIBILITY_TIMEOUT_MS,
  });
  const wakeup = deps.sharedDatabase
    ? new InboxWakeup({
        sql: deps.sql,
        onWake: (woken) => {
          if (woken === undefined || woken === CHANNEL) worker.notify();
        },
        logger,
        retryMs: config.MESSAGING_WORKER_POLL_MS,
      })
    : undefined;
  logger.info(
    { agent: config.AGENT_URL === undefined ? "echo" : "http", api_base_url: config.WHATSAPP_API_BASE_URL },
    "WhatsApp channel configured",
  );
  return {
    routes: createMessagingRoutes(CHANNEL, { channel, store, logger, onStored: () => worker.notify() }),
    publicPaths,
    start() {
      worker.start();
      void wakeup?.start();
    },
    async stop() {
      await wakeup?.close();
      await worker.stop();
    },
  };
}

interface WhatsAppCredentials {
  accessToken: string;
  phoneNumberId: string;
  /** Undefined only when skipping signature validation is allowed and asked for. */
  appSecret: string | undefined;
}

function checkWhatsAppConfig(
  config: MessagingConfig,
  production: boolean,
  logger: Logger,
): WhatsAppCredentials {
  const accessToken = config.WHATSAPP_ACCESS_TOKEN;
  const phoneNumberId = config.WHATSAPP_PHONE_NUMBER_ID;
  const appSecret = config.WHATSAPP_APP_SECRET;
  const skip = config.WHATSAPP_SKIP_SIGNATURE_VALIDATION;
  if (appSecret === undefined && skip && production) {
    throw new MessagingConfigError(
      "WHATSAPP_APP_SECRET: required in production (WHATSAPP_SKIP_SIGNATURE_VALIDATION is not honoured there)",
    );
  }
  const missing: string[] = [];
  if (accessToken === undefined) missing.push("WHATSAPP_ACCESS_TOKEN");
  if (phoneNumberId === undefined) missing.push("WHATSAPP_PHONE_NUMBER_ID");
  if (appSecret === undefined && !skip) {
    missing.push("WHATSAPP_APP_SECRET (or WHATSAPP_SKIP_SIGNATURE_VALIDATION=true outside production)");
  }
  if (accessToken === undefined || phoneNumberId === undefined || missing.length > 0) {
    throw new MessagingConfigError(`WhatsApp channel partly configured; also set ${missing.join(", ")}`);
  }
  if (appSecret === undefined) {
    logger.warn(
      "WHATSAPP_SKIP_SIGNATURE_VALIDATION: webhook signatures are NOT checked; anyone can post messages",
    );
  } else if (skip) {
    logger.warn("WHATSAPP_SKIP_SIGNATURE_VALIDATION is ignored because WHATSAPP_APP_SECRET is set");
  }
  if (config.WHATSAPP_VERIFY_TOKEN === undefined) {
    logger.warn("WHATSAPP_VERIFY_TOKEN is not set; the subscription handshake answers 500 until it is");
  }
  return { accessToken, phoneNumberId, appSecret };
}
