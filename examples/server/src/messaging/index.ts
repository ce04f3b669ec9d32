import {
  type AgentHandler,
  type Channel,
  createHttpAgent,
  createMessaging,
  echoAgent,
  type Messaging,
  messagingRoutePolicy,
} from "@agent-platform/messaging";
import { messagingRoutes } from "@agent-platform/messaging/hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { Sql } from "postgres";
import { invalidEnv } from "../config.js";
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
  production: boolean;
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
 * only get `GET /{channel}/status` saying they are not). Throws a ConfigError for a partial or
 * unsafe configuration, naming the variables.
 */
export async function wireMessaging(deps: ServerMessagingDeps): Promise<ServerMessaging> {
  const { config, production } = deps;
  const channels = channelsFromEnv(config, production, deps.logger);
  checkLeaseOutlastsCalls(config, channels, deps.agent === undefined && config.AGENT_URL !== undefined);
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
  });
  return { ...messaging, routes: messagingRoutes(messaging) };
}

const API_TIMEOUT_VARIABLE: Readonly<Record<string, keyof MessagingConfig>> = {
  whatsapp: "WHATSAPP_API_TIMEOUT_MS",
  slack: "SLACK_API_TIMEOUT_MS",
  telegram: "TELEGRAM_API_TIMEOUT_MS",
};

/**
 * A worker's lease must outlast each call it makes while holding it (the agent, each send): a lease that
 * ran out mid-call would let another worker claim the message and answer it a second time.
 */
function checkLeaseOutlastsCalls(config: MessagingConfig, channels: Channel[], httpAgent: boolean): void {
  const calls: [string, number][] = channels.flatMap((channel) => {
    const variable = API_TIMEOUT_VARIABLE[channel.name];
    return variable === undefined ? [] : [[variable, Number(config[variable])] as [string, number]];
  });
  if (httpAgent) calls.push(["AGENT_TIMEOUT_MS", config.AGENT_TIMEOUT_MS]);
  const lease = config.MESSAGING_VISIBILITY_TIMEOUT_MS;
  const outlasting = calls.filter(([, timeoutMs]) => timeoutMs >= lease);
  if (outlasting.length > 0) {
    throw invalidEnv(
      outlasting.map(
        ([variable, timeoutMs]) =>
          `MESSAGING_VISIBILITY_TIMEOUT_MS (${lease}) must be longer than ${variable} (${timeoutMs}): a lease that runs out during the call lets another worker answer the message again`,
      ),
      "MESSAGING_VISIBILITY_TIMEOUT_MS",
    );
  }
}

/** The messaging routes' JWT policy: webhook and status paths excluded, the inbox listings mapped. */
export const MESSAGING_ROUTE_POLICY = messagingRoutePolicy();
