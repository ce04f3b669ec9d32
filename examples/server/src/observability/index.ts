import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { DecisionListener } from "@agent-platform/jwt-rbac";
import {
  MESSAGE_PROCESSED_CHANNEL,
  type MessageProcessedEvent,
  OUTBOUND_REQUEST_CHANNEL,
  type OutboundRequestEvent,
} from "@agent-platform/messaging";
import type { MiddlewareHandler } from "hono";
import type { DestinationStream, Logger } from "pino";
import type { Sql } from "postgres";
import type { ServerConfig } from "../config.js";
import type { RegisteredDatabase } from "../databases.js";
import { StartupError } from "../startup-error.js";
import { auditLog, createAuditLogger } from "./audit.js";
import { inboxCountsReader } from "./inbox-gauges.js";
import { createServerMetrics, listenMetrics, type MetricsListener } from "./metrics.js";
import { startTracing, type Tracing, tracingMiddleware } from "./tracing.js";

/** What the server wires from the observability settings: the audit trail always, metrics with METRICS_PORT. */
export interface Observability {
  /** jwt-rbac's `onDecision` and `audit`. */
  readonly jwt: { readonly onDecision: DecisionListener; readonly audit: "denied" | "all" };
  /** First in the app, in order: the request span (tracing on), the request timer (metrics on). */
  readonly http: readonly MiddlewareHandler[];
  /** The databases, their migrators counted and timed when metrics are on. */
  readonly databases: readonly RegisteredDatabase[];
  /** Starts the metrics listener (once the inbox exists); its URL, or undefined without metrics. */
  start(inbox: { sql: Sql; channels: readonly string[] } | undefined): Promise<string | undefined>;
  stop(): Promise<void>;
}

export async function wireObservability(
  config: ServerConfig,
  destination: DestinationStream,
  logger: Logger,
  databases: readonly RegisteredDatabase[],
): Promise<Observability> {
  const audit = auditLog(createAuditLogger(config.logLevel, destination), config.auditLog);
  const tracing: Tracing | undefined =
    config.tracing === undefined ? undefined : await startTracing(config.tracing.serviceName, logger);
  const traced = tracing === undefined ? [] : [tracingMiddleware()];
  if (config.metrics === undefined) {
    return {
      jwt: { onDecision: audit, audit: config.auditLog },
      http: traced,
      databases,
      start: async () => undefined,
      stop: async () => {
        await tracing?.shutdown();
      },
    };
  }
  const { host, port } = config.metrics;
  let inbox: ReturnType<typeof inboxCountsReader> | undefined;
  const metrics = createServerMetrics({ inbox: () => inbox?.read() ?? Promise.resolve(emptyInbox) });
  const onProcessed = (message: unknown) => {
    const event = message as MessageProcessedEvent;
    metrics.processed(event.channel, event.outcome);
  };
  const onOutbound = (message: unknown) => {
    const event = message as OutboundRequestEvent;
    metrics.outbound(event.target, event.statusCode, event.durationMs / 1000);
  };
  let listener: MetricsListener | undefined;
  return {
    // Every decision is counted; only refusals are logged unless AUDIT_LOG=all.
    jwt: {
      onDecision: (decision) => {
        metrics.decision(decision);
        audit(decision);
      },
      audit: "all",
    },
    http: [...traced, metrics.http],
    databases: databases.map((database) => ({
      ...database,
      migrator: metrics.observeMigrator(database.id, database.migrator),
    })),
    async start(inboxDatabase) {
      if (inboxDatabase !== undefined) inbox = inboxCountsReader(inboxDatabase.sql, inboxDatabase.channels);
      subscribe(MESSAGE_PROCESSED_CHANNEL, onProcessed);
      subscribe(OUTBOUND_REQUEST_CHANNEL, onOutbound);
      try {
        listener = await listenMetrics(metrics.registry, host, port, logger);
      } catch (error) {
        unsubscribe(MESSAGE_PROCESSED_CHANNEL, onProcessed);
        unsubscribe(OUTBOUND_REQUEST_CHANNEL, onOutbound);
        throw error instanceof Error && /already in use/.test(error.message)
          ? new StartupError("PORT_IN_USE", error.message)
          : error;
      }
      return listener.url;
    },
    async stop() {
      unsubscribe(MESSAGE_PROCESSED_CHANNEL, onProcessed);
      unsubscribe(OUTBOUND_REQUEST_CHANNEL, onOutbound);
      await listener?.close();
      await tracing?.shutdown();
    },
  };
}

const emptyInbox = { messages: [], oldestPending: [] };
