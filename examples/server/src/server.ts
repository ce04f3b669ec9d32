import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { jwtRbac } from "@agent-platform/jwt-rbac/hono";
import type { Migration } from "@agent-platform/migrator";
import { getRequestListener } from "@hono/node-server";
import type { DestinationStream, Logger } from "pino";
import type { Sql } from "postgres";
import { createApp } from "./app.js";
import { assertKeyConfigured, jwtOptions, protectedResourceMetadata } from "./auth.js";
import { hasJwtKey, type ServerConfig } from "./config.js";
import { openDatabases, type RegisteredDatabase } from "./databases.js";
import {
  DEV_KEY_ALGORITHM,
  type DevToken,
  devTokenAudience,
  loadOrCreateDevKey,
  signDevToken,
} from "./dev-key.js";
import { answerClientErrors } from "./http/client-error.js";
import { createLogger, serverLogDestination } from "./http/logging.js";
import { guardRequests, requestErrorResponse } from "./http/request-guard.js";
import { type ServerMessaging, wireMessaging } from "./messaging/index.js";
import { canonicalVersion, pendingLine } from "./migrate.js";
import { platformMigrations } from "./migrations/index.js";
import { wireObservability } from "./observability/index.js";
import { StartupError } from "./startup-error.js";

export interface StartServerOptions {
  /** Replaces the platform schema's migrations (tests use a list with an irreversible step). */
  readonly migrations?: readonly Migration[];
  /** Where the JSON log lines go; stdout by default. */
  readonly logDestination?: DestinationStream;
}

export interface RunningServer {
  /** `http://host:port`, with the port actually bound (PORT=0 picks a free one). */
  readonly url: string;
  readonly port: number;
  /** Set when no JWT key is configured outside production: an admin token signed by the generated key. */
  readonly devToken: DevToken | undefined;
  /** `http://host:port` of the Prometheus listener (METRICS_PORT); undefined without it. */
  readonly metricsUrl: string | undefined;
  /** The pool of a registered database (default: the inbox database), for tests that inspect rows. */
  sql(databaseId?: string): Sql;
  /**
   * Stops accepting, lets in-flight requests and the messaging worker's calls finish within SHUTDOWN_TIMEOUT_MS
   * (then cuts the connections and aborts the calls), closes the pools.
   */
  stop(): Promise<void>;
}

type NodeServer = Server;

/**
 * How often Node looks for requests past their deadlines (its default, 30 s, would let a stalled request live
 * up to 30 s past `REQUEST_TIMEOUT_MS`).
 */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * Node's own deadlines for a request, from REQUEST_TIMEOUT_MS: the headers within it, the whole request within
 * it and a second more (the webhooks' body deadline answers first, with its JSON 408; this one closes whatever
 * else is still arriving, the bodies of other routes included). A kept-alive idle connection is closed after
 * Node's default 5 s.
 */
function requestDeadlines(requestTimeoutMs: number) {
  return {
    headersTimeout: requestTimeoutMs,
    requestTimeout: requestTimeoutMs + TIMEOUT_CHECK_MS,
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
  };
}

function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  config: ServerConfig,
  logger: Logger,
) {
  const { host, port } = config;
  return new Promise<NodeServer>((resolve, reject) => {
    const listener = getRequestListener(fetch, { hostname: host, errorHandler: requestErrorResponse });
    // Host is checked by guardRequests, which answers with the JSON body rather than Node's empty 400.
    const server = createServer(
      { requireHostHeader: false, ...requestDeadlines(config.requestTimeoutMs) },
      guardRequests(listener, logger),
    );
    server.listen(port, host, () => resolve(server));
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE"
          ? new StartupError(
              "PORT_IN_USE",
              `${host}:${port} is already in use; set PORT (and HOST) to a free one`,
            )
          : error,
      );
    });
  });
}

/** Closes the listener and waits for in-flight requests, cutting whatever is left after `timeoutMs`. */
function drain(server: NodeServer, timeoutMs: number): Promise<"drained" | "timed out"> {
  return new Promise((resolve) => {
    // Keep-alive connections become idle once their response is sent; close them as they do.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      finish("timed out");
    }, timeoutMs);
    const finish = (outcome: "drained" | "timed out") => {
      clearInterval(idle);
      clearTimeout(deadline);
      resolve(outcome);
    };
    server.close(() => finish("drained"));
    server.closeIdleConnections();
  });
}

function urlHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/** Starts the reference server; `main.ts` calls this, and so do the tests (with PORT=0). */
export async function startServer(
  config: ServerConfig,
  options: StartServerOptions = {},
): Promise<RunningServer> {
  // One destination for the server log and the audit trail, so their lines never interleave, and on stdout one
  // bound on what waits for a log collector that does not read.
  const { destination, reportDropsTo } = serverLogDestination(options.logDestination);
  const logger = createLogger(config.logLevel, destination);
  reportDropsTo(logger);
  assertKeyConfigured(config);
  const devKey = hasJwtKey(config.jwt) ? undefined : await loadOrCreateDevKey(config.dataDir);
  if (
    devKey !== undefined &&
    config.jwt.algorithm !== undefined &&
    config.jwt.algorithm !== DEV_KEY_ALGORITHM
  ) {
    logger.warn(
      `JWT_ALGORITHM=${config.jwt.algorithm} is ignored: the development key is ${DEV_KEY_ALGORITHM}`,
    );
  }

  const migrations = options.migrations ?? platformMigrations();
  // Aborted at the shutdown deadline: a migration still running then is cancelled and rolled back.
  const stopMigrations = new AbortController();
  const observability = await wireObservability(
    config,
    destination,
    logger,
    await openDatabases(config, migrations, logger, stopMigrations.signal),
  );
  const { databases } = observability;
  const closeDatabases = () => Promise.allSettled(databases.map((database) => database.close()));

  // The inbox database (inbox and the like): `default`, or the first one DATABASES names.
  const platformDatabase = (databases.find((database) => database.id === "default") ??
    databases[0]) as RegisteredDatabase;
  const sql = (databaseId = platformDatabase.id) => {
    const database = databases.find((candidate) => candidate.id === databaseId);
    if (database === undefined) throw new Error(`No database with id '${databaseId}'`);
    return database.sql;
  };

  let messaging: ServerMessaging | null = null;
  let server: NodeServer | undefined;
  let url = "";
  let metricsUrl: string | undefined;
  let workersRunning = false;
  try {
    messaging = await wireMessaging({
      config: config.messaging,
      sql: platformDatabase.sql,
      logger: logger.child({ component: "messaging" }),
      environment: config.env,
      sharedDatabase: !platformDatabase.embedded,
      bodyTimeoutMs: config.requestTimeoutMs,
    });
    // Replicas share a PostgreSQL inbox database, so DPoP proofs are remembered there; the embedded one is this process's.
    const sharedSql = platformDatabase.embedded ? undefined : platformDatabase.sql;
    const auth = jwtRbac({ ...jwtOptions(config, devKey, logger, sharedSql), ...observability.jwt });
    // A key that cannot be imported for the algorithm stops startup instead of failing every request.
    await auth.auth.ready;
    const app = createApp({
      serverUrl: () => url,
      databases,
      knownVersions: migrations.map((migration) => canonicalVersion(migration.version) ?? migration.version),
      auth,
      logger,
      routes: messaging === null ? [] : [messaging.routes],
      inboxCanStore: messaging.canStore,
      protectedResource: (origin) => protectedResourceMetadata(config, origin),
      cors: {
        allowedOrigins: config.corsAllowedOrigins,
        credentials: config.jwt.tokenSource !== "header",
        dpop: config.jwt.dpop !== "off",
      },
      observe: observability.http,
      readiness: () => ({
        databases,
        // Without a channel nothing is stored, and the inbox schema is not even created.
        inbox: messaging === null || messaging.channels.length === 0 ? undefined : messaging.canStore,
        workersRunning: () => workersRunning,
      }),
    });
    server = await listen(app.fetch, config, logger);
    answerClientErrors(server, logger);
    url = `http://${urlHost(config.host)}:${(server.address() as AddressInfo).port}`;
    metricsUrl = await observability.start(
      messaging === null ? undefined : { sql: platformDatabase.sql, channels: messaging.channels },
    );
  } catch (error) {
    await new Promise((done) => (server === undefined ? done(undefined) : server.close(done)));
    await observability.stop();
    await messaging?.stop();
    await closeDatabases();
    throw error;
  }

  const port = (server.address() as AddressInfo).port;
  logger.info(
    {
      url,
      env: config.env,
      databases: databases.map((database) => database.id),
      auth: devKey === undefined ? "configured key" : "development key",
      ...(metricsUrl === undefined ? {} : { metrics: `${metricsUrl}/metrics` }),
    },
    `Listening on ${url}`,
  );
  messaging?.start();
  logPendingMigrations(databases, logger);
  workersRunning = messaging !== null;

  const devToken = devKey === undefined ? undefined : await signDevToken(devKey, devTokenAudience(config));

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      logger.info({ timeout_ms: config.shutdownTimeoutMs }, "Shutting down: no new connections");
      workersRunning = false;
      // One deadline for all: requests in flight, the messaging worker's agent and channel calls, and a migration in
      // progress. What is still open then is aborted: messages stay leased and are answered after a restart; a
      // migration is cancelled and rolled back, and its lock released.
      const deadline = AbortSignal.timeout(config.shutdownTimeoutMs);
      const abortMigrations = () => stopMigrations.abort(new Error("the server is shutting down"));
      deadline.addEventListener("abort", abortMigrations, { once: true });
      const [outcome] = await Promise.all([
        drain(server, config.shutdownTimeoutMs),
        messaging?.stop({ signal: deadline }),
      ]);
      deadline.removeEventListener("abort", abortMigrations);
      if (outcome === "timed out") {
        logger.warn("In-flight requests did not finish in time; connections cut");
        abortMigrations();
      }
      await observability.stop();
      await closeDatabases();
      logger.info("Stopped");
    })();
    return stopping;
  };
  return { url, port, metricsUrl, devToken, sql, stop };
}

/**
 * One line per database whose schema is behind the code. Not awaited: a database that is slow or down
 * delays nothing (its status is read when it answers, and /health reports it); a pending migration is not an
 * outage, so /health stays 200.
 */
function logPendingMigrations(databases: readonly RegisteredDatabase[], logger: Logger): void {
  for (const database of databases) {
    database.migrator.status().then(
      (status) => {
        const line = pendingLine(database.id, status);
        if (line !== undefined) {
          logger.warn(
            { db_id: database.id, current: status.current, pending: status.pending.map((m) => m.version) },
            line,
          );
        }
      },
      (error: unknown) =>
        logger.debug({ db_id: database.id, err: error }, "Could not read the migration status at startup"),
    );
  }
}
