import {
  type AgentHandler,
  createHttpAgent,
  createMessaging,
  echoAgent,
  type Messaging,
  MessagingConfigError,
  messagingRoutePolicy,
  whatsapp,
} from "@agent-platform/messaging";
import { messagingRoutes } from "@agent-platform/messaging/hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { Sql } from "postgres";
import type { MessagingConfig } from "./config.js";

export { MessagingConfigError } from "@agent-platform/messaging";
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
 * The server's messaging, wired from its environment: the WhatsApp channel when its variables are set,
 * otherwise only `GET /whatsapp/status` saying it is not. Throws MessagingConfigError for a partial or unsafe
 * configuration, naming the variables.
 */
export async function wireMessaging(deps: ServerMessagingDeps): Promise<ServerMessaging> {
  const { config, production } = deps;
  const logger = deps.logger.child({ channel: "whatsapp" });
  const configured = [
    config.WHATSAPP_VERIFY_TOKEN,
    config.WHATSAPP_APP_SECRET,
    config.WHATSAPP_ACCESS_TOKEN,
    config.WHATSAPP_PHONE_NUMBER_ID,
  ].some((value) => value !== undefined);
  const channels = [];
  if (configured) {
    const { accessToken, phoneNumberId, appSecret } = checkWhatsAppConfig(config, production, logger);
    channels.push(
      whatsapp({
        verifyToken: config.WHATSAPP_VERIFY_TOKEN,
        appSecret,
        skipSignatureValidation: appSecret === undefined,
        accessToken,
        phoneNumberId,
        apiBaseUrl: config.WHATSAPP_API_BASE_URL,
        apiTimeoutMs: config.WHATSAPP_API_TIMEOUT_MS,
      }),
    );
    logger.info(
      { agent: config.AGENT_URL === undefined ? "echo" : "http", api_base_url: config.WHATSAPP_API_BASE_URL },
      "WhatsApp channel configured",
    );
  }
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

/** The messaging routes' JWT policy: webhook and status paths excluded, the inbox listings mapped. */
export const MESSAGING_ROUTE_POLICY = messagingRoutePolicy();

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
