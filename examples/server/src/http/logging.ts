import type { MiddlewareHandler } from "hono";
import pino, { type DestinationStream, type Logger } from "pino";
import type { AppEnv } from "./env.js";
import { boundedStdout, reportDrops } from "./log-destination.js";

/**
 * The longest text a log line carries in one field (or as its message): a path, a header or an error message can
 * be as long as a client makes it (Node lets a request line and headers reach 16 KiB), and a log line per request
 * would carry all of it.
 */
export const MAX_LOGGED_CHARS = 512;

/** `value`, cut at MAX_LOGGED_CHARS with a marker saying how much was left out. */
export function capForLog(value: string): string {
  if (value.length <= MAX_LOGGED_CHARS) return value;
  return `${value.slice(0, MAX_LOGGED_CHARS)}…[${value.length - MAX_LOGGED_CHARS} more characters]`;
}

function capFields(value: unknown, depth: number): unknown {
  if (typeof value === "string") return capForLog(value);
  if (depth === 0 || value === null || typeof value !== "object" || value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((item) => capFields(item, depth - 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const capped: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) capped[key] = capFields(field, depth - 1);
  return capped;
}

/**
 * What every logger of the server shares: its `service`, the censored keys, and every text field and message cut at
 * MAX_LOGGED_CHARS, so no line (a request's, an audit decision's) carries an attacker-sized path or header.
 */
export function serverLogOptions(level: string): pino.LoggerOptions {
  return {
    level,
    base: { service: "agent-platform-server" },
    // Defence in depth: nothing here logs headers or tokens, and these keys stay censored if a later change does.
    redact: {
      paths: ["authorization", "token", "*.authorization", "*.token", "headers.cookie", "*.headers.cookie"],
      censor: "[redacted]",
    },
    formatters: { log: (object) => capFields(object, 3) as Record<string, unknown> },
    hooks: {
      logMethod(args, method) {
        const capped = args.map((arg) => (typeof arg === "string" ? capForLog(arg) : arg)) as typeof args;
        method.apply(this, capped);
      },
    },
  };
}

/**
 * Where the server's lines go: `given`, or stdout with at most LOG_BUFFER_BYTES of lines waiting when it is not
 * read (the rest dropped, and counted in a warning once it is read again, see `reportDrops`).
 */
export function serverLogDestination(given?: DestinationStream): {
  destination: DestinationStream;
  reportDropsTo: (logger: Logger) => void;
} {
  if (given !== undefined) return { destination: given, reportDropsTo: () => {} };
  const stdout = boundedStdout();
  return {
    destination: stdout.stream,
    reportDropsTo: (logger) => reportDrops(stdout.stream, stdout.drops, logger),
  };
}

/** The server's logger: JSON lines on `destination` (by default the bounded stdout of serverLogDestination). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const out = serverLogDestination(destination);
  const logger = pino(serverLogOptions(level), out.destination);
  out.reportDropsTo(logger);
  return logger;
}

/**
 * One log line per request with its id, method, path and status. The path is logged without its query
 * string, which can carry secrets (the WhatsApp handshake's `hub.verify_token`), and cut at MAX_LOGGED_CHARS
 * like every field (createLogger).
 */
export function requestLogging(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestLogger = logger.child({ req_id: c.get("requestId") });
    c.set("logger", requestLogger);
    await next();
    const fields = {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
    };
    if (c.res.status >= 500) requestLogger.error(fields, "request failed");
    else requestLogger.info(fields, "request completed");
  };
}
