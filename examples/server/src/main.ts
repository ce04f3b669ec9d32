import type { DestinationStream } from "pino";
import { loadConfig, redactUrl, type ServerConfig } from "./config.js";
import { type RunningServer, startServer } from "./server.js";
import { StartupError } from "./startup-error.js";
import { startupFailureLine } from "./startup-failure.js";

/** How long the inbox database gets to answer at startup before the server refuses to run without it. */
const STARTUP_DATABASE_TIMEOUT_MS = 5_000;

/**
 * The inbox database (`default`, or the first one DATABASES names) must answer at startup: a server that cannot store what it
 * acknowledges should not start. Other databases may be down; `/health` names them.
 */
async function assertInboxDatabaseAnswers(server: RunningServer, config: ServerConfig): Promise<void> {
  const inbox = config.databases.find((database) => database.id === "default") ?? config.databases[0];
  if (inbox === undefined) return; // embedded PostgreSQL, inside this process
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      server.sql()`SELECT 1`,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${STARTUP_DATABASE_TIMEOUT_MS / 1000} s`)),
          STARTUP_DATABASE_TIMEOUT_MS,
        );
      }),
    ]);
  } catch (error) {
    await server.stop().catch(() => undefined);
    const reason = error instanceof Error ? error.message : String(error);
    throw new StartupError(
      "DATABASE_UNREACHABLE",
      `the inbox database '${inbox.id}' (${redactUrl(inbox.url)}) does not answer: ${reason}. Start PostgreSQL or fix DATABASE_URL (or DATABASES)`,
    );
  } finally {
    clearTimeout(timer);
  }
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Log lines for a person at a terminal (colours, local time, message first) and JSON lines otherwise, for a
 * log collector. Synchronous, so the last lines before an exit are never lost. pino-pretty is loaded only for
 * a terminal: a server under a process manager does not pay for it at startup.
 */
async function logDestination(): Promise<DestinationStream | undefined> {
  if (!process.stdout.isTTY) return undefined;
  const { default: pretty } = await import("pino-pretty");
  return pretty({
    sync: true,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,service",
  });
}

async function main(): Promise<void> {
  const config = loadConfig();
  const destination = await logDestination();
  const server = await startServer(config, destination === undefined ? {} : { logDestination: destination });
  await assertInboxDatabaseAnswers(server, config);

  if (server.devToken !== undefined) {
    // For the person at the terminal, on stderr: stdout stays one JSON log record per line.
    const { token, expiresAt } = server.devToken;
    const curl = `curl -sS --fail-with-body -X POST -H ${shellQuote(`Authorization: Bearer ${token}`)} ${shellQuote(`${server.url}/databases/default/migrate`)}`;
    process.stderr.write(
      [
        "",
        `No JWT key configured (PLATFORM_ENV=${config.env}): using a development key generated in ${config.dataDir}.`,
        `Development token, scope platform:admin, valid until ${expiresAt.toISOString()}:`,
        "",
        `  ${token}`,
        "",
        "Migrate the default database to the latest version:",
        "",
        `  ${curl}`,
        "",
        "",
      ].join("\n"),
    );
  }

  // Under `pnpm start` one Ctrl-C arrives twice, from the terminal and forwarded by pnpm, within
  // milliseconds: a repeat inside this window is the same keypress, not the "exit now" second signal.
  const SAME_SIGNAL_MS = 1_000;
  let firstSignalAt: number | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    if (firstSignalAt !== undefined) {
      if (performance.now() - firstSignalAt < SAME_SIGNAL_MS) return;
      process.stderr.write(`${signal} again: exiting without waiting\n`);
      process.exit(1);
    }
    firstSignalAt = performance.now();
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(startupFailureLine(error));
  process.exit(1);
});
