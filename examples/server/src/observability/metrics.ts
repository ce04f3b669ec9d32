import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AccessDecision } from "@agent-platform/jwt-rbac";
import type { Migrator } from "@agent-platform/migrator";
import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { Logger } from "pino";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { InboxCounts } from "./inbox-gauges.js";

/** The `http_route` of a request no route matched: one fixed value, whatever the path. */
export const UNMATCHED_ROUTE = "unmatched";
/** The `http_request_method` of a method outside the HTTP standard ones (OpenTelemetry's convention). */
export const OTHER_METHOD = "_OTHER";
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);
/** The outbound targets of the messaging package, the only values of `target`. */
const TARGETS = new Set(["agent", "whatsapp", "slack", "telegram"]);
const OUTCOMES = new Set(["done", "retry", "failed"]);

/** Hono's `:param` (with an optional `{regex}`) as the OpenAPI-style `{param}` a route label shows. */
function template(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?\??/g, "{$1}");
}

/**
 * The label of a status: a three-digit code as it is, anything else (which Node cannot even send) one word.
 * The codes are at most 500 values, so the label stays bounded whatever a handler sets.
 */
export function statusLabel(status: number | null | undefined): string {
  return typeof status === "number" && Number.isInteger(status) && status >= 100 && status <= 599
    ? String(status)
    : "other";
}

/**
 * The route template Hono matched for this request (never the raw path): the last handler registered for a
 * method, rather than a middleware (`app.use`, method ALL), names the route.
 */
export function routeLabel(c: Parameters<MiddlewareHandler>[0]): string {
  const routes = matchedRoutes(c);
  for (let index = routes.length - 1; index >= 0; index--) {
    const route = routes[index];
    if (route !== undefined && route.method !== "ALL") return template(route.path);
  }
  return UNMATCHED_ROUTE;
}

export interface ServerMetrics {
  readonly registry: Registry;
  /** First in the app: times every request and labels it by route template. */
  readonly http: MiddlewareHandler;
  /** jwt-rbac's `onDecision` with `audit: "all"`: the auth counter. */
  decision(decision: AccessDecision): void;
  /** One inbox message handled by a worker. */
  processed(channel: string, outcome: string): void;
  /** One outbound request of the messaging package, finished (`status` null: no answer). */
  outbound(target: string, status: number | null, seconds: number): void;
  /** A migrator whose runs are counted and timed under `dbId`. */
  observeMigrator(dbId: string, migrator: Migrator): Migrator;
}

export interface MetricsOptions {
  /** The inbox's counts, read from the database at most every few seconds whatever the scrape rate. */
  readonly inbox?: () => Promise<InboxCounts>;
}

/** The server's Prometheus series, in a registry of their own (prom-client's default one is left alone). */
export function createServerMetrics(options: MetricsOptions = {}): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP server requests, by method, route template and status",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    registers: [registry],
  });
  const decisions = new Counter({
    name: "agent_platform_auth_decisions_total",
    help: "Access decisions of the JWT/RBAC middleware, by result and reason (ok when allowed)",
    labelNames: ["result", "reason"],
    registers: [registry],
  });
  const processed = new Counter({
    name: "agent_platform_inbox_processed_total",
    help: "Inbox messages handled by the workers, by channel and outcome",
    labelNames: ["channel", "outcome"],
    registers: [registry],
  });
  const outbound = new Histogram({
    name: "agent_platform_outbound_request_duration_seconds",
    help: "Duration of outbound requests to the agent and the chat products' APIs, by target and status",
    labelNames: ["target", "status_code"],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const migrations = new Counter({
    name: "agent_platform_migrations_total",
    help: "Migration runs, by database and outcome (applied, failed, noop)",
    labelNames: ["db_id", "outcome"],
    registers: [registry],
  });
  const migrationDuration = new Histogram({
    name: "agent_platform_migration_duration_seconds",
    help: "Duration of migration runs, by database",
    labelNames: ["db_id"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  if (options.inbox !== undefined) {
    const read = options.inbox;
    const messages = new Gauge({
      name: "agent_platform_inbox_messages",
      help: "Inbox rows by channel and status, read from the database at most every few seconds",
      labelNames: ["channel", "status"],
      registers: [registry],
      async collect() {
        const counts = await read();
        this.reset();
        for (const row of counts.messages) this.set({ channel: row.channel, status: row.status }, row.count);
      },
    });
    const oldest = new Gauge({
      name: "agent_platform_inbox_oldest_pending_seconds",
      help: "Age of the oldest inbox message not yet answered (pending or processing), by channel; 0 when none",
      labelNames: ["channel"],
      registers: [registry],
      async collect() {
        const counts = await read();
        this.reset();
        for (const row of counts.oldestPending) this.set({ channel: row.channel }, row.seconds);
      },
    });
    void messages;
    void oldest;
  }

  return {
    registry,
    http: async (c, next) => {
      const started = performance.now();
      try {
        await next();
      } finally {
        const method = c.req.method;
        requests.observe(
          {
            http_request_method: METHODS.has(method) ? method : OTHER_METHOD,
            http_route: routeLabel(c),
            http_response_status_code: statusLabel(c.res.status),
          },
          (performance.now() - started) / 1000,
        );
      }
    },
    decision(decision) {
      decisions.inc({ result: decision.allowed ? "allowed" : "denied", reason: decision.reason });
    },
    processed(channel, outcome) {
      if (OUTCOMES.has(outcome)) processed.inc({ channel, outcome });
    },
    outbound(target, status, seconds) {
      if (TARGETS.has(target)) outbound.observe({ target, status_code: statusLabel(status) }, seconds);
    },
    observeMigrator(dbId, migrator) {
      return {
        status: () => migrator.status(),
        async migrate(migrateOptions) {
          const stop = migrationDuration.startTimer({ db_id: dbId });
          try {
            const result = await migrator.migrate(migrateOptions);
            const dryRun = migrateOptions?.dryRun === true;
            migrations.inc({
              db_id: dbId,
              outcome: result.applied.length > 0 && !dryRun ? "applied" : "noop",
            });
            return result;
          } catch (error) {
            migrations.inc({ db_id: dbId, outcome: "failed" });
            throw error;
          } finally {
            stop();
          }
        },
      };
    },
  };
}

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on its own listener (`METRICS_HOST`:`METRICS_PORT`): the API port's `/metrics` is a platform
 * route with another meaning. Anything else is a 404; a failed collection is a 500 naming nothing internal.
 */
export function listenMetrics(
  registry: Registry,
  host: string,
  port: number,
  logger: Logger,
): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found: GET /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "Content-Type": registry.contentType });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => {
        logger.error({ err: error }, "metrics collection failed");
        res.writeHead(500, { "Content-Type": "text/plain" }).end("metrics collection failed\n");
      },
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`${host}:${port} is already in use; set METRICS_PORT (and METRICS_HOST) to a free one`)
          : error,
      ),
    );
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      const shown = address.address.includes(":") ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${shown}:${address.port}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
