import {
  type AgentHandler,
  createHttpAgent,
  createMessaging,
  type Environment,
  echoAgent,
  type Messaging,
  messagingRoutePolicy,
} from "@agent-platform/messaging";
import { messagingRoutes } from "@agent-platform/messaging/hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { Sql } from "postgres";
import { channelsFromEnv } from "./channels.js";
import type { MessagingConfig } from "./config.js";

export { type MessagingConfig, messagingConfigSchema } from "./config.js";

export interface ServerMessaging extends Messaging {
  /** Mounted at "/" by the server. */
  routes: OpenAPIHono;
}

export interface ServerMessagingDeps {
  config: MessagingConfig;
  /** The platform database (`default`). */
  sql: Sql;
  logger: Logger;
  /** PLATFORM_ENV: in production an unauthenticated channel is refused (by the package). */
  environment: Environment;
  /**
   * Whether other processes may share the database (real PostgreSQL): then the workers also LISTEN for
   * the rows they store. Embedded PGlite is one process's.
   */
  sharedDatabase: boolean;
  /** Replaces the agent chosen by AGENT_URL (echo when unset). */
  agent?: AgentHandler;
}

/**
 * The server's messaging, wired from its environment: each channel whose variables are set (the others
 * only get `GET /{channel}/status` saying they are not). Throws a ConfigError for a partial configuration,
 * naming the variables, and passes on the package's for an unsafe one (a lease shorter than a call, an
 * unauthenticated channel in production), which names the option.
 */
export async function wireMessaging(deps: ServerMessagingDeps): Promise<ServerMessaging> {
  const { config } = deps;
  const channels = channelsFromEnv(config, deps.logger);
  const agent =
    deps.agent ??
    (config.AGENT_URL === undefined ? echoAgent : createHttpAgent(config.AGENT_URL, config.AGENT_TIMEOUT_MS));
  const messaging = await createMessaging({
    sql: deps.sql,
    channels,
    agent,
    logger: deps.logger,
    worker: {
      concurrency: config.MESSAGING_WORKER_CONCURRENCY,
      pollMs: config.MESSAGING_WORKER_POLL_MS,
      startDelayMs: config.MESSAGING_WORKER_START_DELAY_MS,
      maxAttempts: config.MESSAGING_MAX_ATTEMPTS,
      retryBaseMs: config.MESSAGING_RETRY_BASE_MS,
      retryMaxMs: config.MESSAGING_RETRY_MAX_MS,
      leaseMs: config.MESSAGING_VISIBILITY_TIMEOUT_MS,
    },
    commit: { maxBatch: config.MESSAGING_COMMIT_MAX_BATCH, maxWaitMs: config.MESSAGING_COMMIT_MAX_WAIT_MS },
    listen: deps.sharedDatabase,
    environment: deps.environment,
  });
  return { ...messaging, routes: messagingRoutes(messaging) };
}

/** The messaging routes' JWT policy: webhook and status paths excluded, the inbox listings mapped. */
export const MESSAGING_ROUTE_POLICY = messagingRoutePolicy();
