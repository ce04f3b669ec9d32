import {
  type AgentHandler,
  type Channel,
  type ConfigError,
  createHttpAgent,
  createMessaging,
  type Environment,
  echoAgent,
  isConfigError,
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
  /** The inbox database (`default`). */
  sql: Sql;
  logger: Logger;
  /** PLATFORM_ENV: in production an unauthenticated channel is refused (by the package). */
  environment: Environment;
  /**
   * Whether other processes may share the database (real PostgreSQL): then the workers also LISTEN for
   * the rows they store. Embedded PGlite is one process's.
   */
  sharedDatabase: boolean;
  /** REQUEST_TIMEOUT_MS: a webhook's whole body must arrive within this (the package's default when unset). */
  bodyTimeoutMs?: number;
  /** Replaces the agent chosen by AGENT_URL (echo when unset). */
  agent?: AgentHandler;
}

/**
 * The server's messaging, wired from its environment: each channel whose variables are set (the others
 * only get `GET /{channel}/status` saying they are not). Throws a ConfigError for a partial configuration,
 * naming the variables; the package's refusal of an unsafe one (a lease shorter than a call, an
 * unauthenticated channel in production) comes with the variables that set what it names.
 */
export async function wireMessaging(deps: ServerMessagingDeps): Promise<ServerMessaging> {
  const { config } = deps;
  const channels = channelsFromEnv(config, deps.logger);
  const messaging = await createServerMessaging(deps, channels).catch((error: unknown) => {
    throw isConfigError(error) && error.component === "messaging" ? inVariables(error) : error;
  });
  return { ...messaging, routes: messagingRoutes(messaging) };
}

function createServerMessaging(deps: ServerMessagingDeps, channels: Channel[]): Promise<Messaging> {
  const { config } = deps;
  const agent =
    deps.agent ??
    (config.AGENT_URL === undefined ? echoAgent : createHttpAgent(config.AGENT_URL, config.AGENT_TIMEOUT_MS));
  return createMessaging({
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
      ordering: config.MESSAGING_ORDERING,
    },
    retention: {
      doneDays: config.MESSAGING_RETENTION_DONE_DAYS,
      failedDays: config.MESSAGING_RETENTION_FAILED_DAYS,
    },
    commit: {
      maxBatch: config.MESSAGING_COMMIT_MAX_BATCH,
      maxWaitMs: config.MESSAGING_COMMIT_MAX_WAIT_MS,
      timeoutMs: config.MESSAGING_COMMIT_TIMEOUT_MS,
    },
    ...(deps.bodyTimeoutMs === undefined ? {} : { body: { timeoutMs: deps.bodyTimeoutMs } }),
    listen: deps.sharedDatabase,
    environment: deps.environment,
  });
}

/** What the package calls an option or a setting, and the variable an operator sets it with. */
const VARIABLES: readonly (readonly [string, string])[] = [
  ["worker.leaseMs", "MESSAGING_VISIBILITY_TIMEOUT_MS"],
  ["the whatsapp channel's apiTimeoutMs", "WHATSAPP_API_TIMEOUT_MS"],
  ["the slack channel's apiTimeoutMs", "SLACK_API_TIMEOUT_MS"],
  ["the telegram channel's apiTimeoutMs", "TELEGRAM_API_TIMEOUT_MS"],
  ["the agent's timeoutMs", "AGENT_TIMEOUT_MS"],
  ["whatsapp skipSignatureValidation", "WHATSAPP_APP_SECRET"],
  ["telegram allowUnauthenticated", "TELEGRAM_WEBHOOK_SECRET_TOKEN"],
];

/**
 * The package's refusal names its options; the operator sets variables. Each problem keeps its words and
 * gets the variables it is about, so the one line at startup says what to change.
 */
function inVariables(error: ConfigError): ConfigError {
  const named = new Set<string>();
  const problems = error.problems.map((problem) => {
    const variables = VARIABLES.filter(([phrase]) => problem.includes(phrase)).map(
      ([, variable]) => variable,
    );
    for (const variable of variables) named.add(variable);
    return variables.length === 0 ? problem : `${problem} (set with ${variables.join(", ")})`;
  });
  return invalidEnv(problems, named.size === 1 ? [...named][0] : undefined);
}

/** The messaging routes' JWT policy: webhook and status paths excluded, the inbox routes mapped. */
export const MESSAGING_ROUTE_POLICY = messagingRoutePolicy();
