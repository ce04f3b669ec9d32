import { ConfigError } from "./config-error.js";

/**
 * The logger every agent-platform package writes to: pino's shape (fields first, then the message), so a
 * pino logger, or a child of one, is passed as it is, and so is any logger with these four levels and
 * `child`. The packages never put tokens, secrets or keys in fields or messages.
 */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  /** A logger that adds `bindings` to the fields of every record. */
  child(bindings: Record<string, unknown>): Logger;
}

/** One level of a `Logger`: `(fields, message?)` as pino takes it, or a bare message. */
export interface LogMethod {
  (fields: object, message?: string): void;
  (message: string): void;
}

/** The default: logs nothing. */
export const SILENT_LOGGER: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => SILENT_LOGGER,
};

const METHODS = ["debug", "info", "warn", "error", "child"] as const;

/**
 * The `logger` option of a component: `SILENT_LOGGER` when none is given, the logger itself when it has
 * the `Logger` shape, and a `ConfigError` naming `component` otherwise, so a wrong logger (a bare
 * function, `console` without `child`) fails at setup rather than at the first record.
 */
export function loggerOption(value: unknown, component: string): Logger {
  if (value === undefined) return SILENT_LOGGER;
  const missing =
    typeof value === "object" && value !== null
      ? METHODS.filter((method) => typeof (value as Record<string, unknown>)[method] !== "function")
      : METHODS;
  if (missing.length > 0) {
    throw new ConfigError(
      `\`logger\` must have pino's shape (debug, info, warn, error and child methods); missing ${missing.join(", ")}`,
      { component, option: "logger" },
    );
  }
  return value as Logger;
}
