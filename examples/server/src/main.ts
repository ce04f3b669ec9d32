import { JwtRbacConfigError } from "@agent-platform/jwt-rbac";
import { StartupError } from "./auth.js";
import { ConfigError, loadConfig } from "./config.js";
import { MessagingConfigError } from "./messaging/index.js";
import { startServer } from "./server.js";

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const server = await startServer(config);

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

  let signals = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      process.stderr.write(`${signal} again: exiting without waiting\n`);
      process.exit(1);
    }
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
  const known =
    error instanceof ConfigError ||
    error instanceof StartupError ||
    error instanceof MessagingConfigError ||
    error instanceof JwtRbacConfigError;
  const message = known
    ? error.message
    : error instanceof Error
      ? (error.stack ?? error.message)
      : String(error);
  process.stderr.write(`The server did not start. ${message}\n`);
  process.exit(1);
});
