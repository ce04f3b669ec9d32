import { ConfigError } from "./config-error.js";

/**
 * The logger every agent-platform package writes to: pino's shape (fields first, then the message), so a
 * pino logger, or a child of one, is passed as it is. The packages never put tokens, secrets or keys in
 * fields or messages.
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

/**
 * What the `logger` option accepts: the four levels, `child` optional. `console` and most loggers without
 * children (levels only) fit; a record goes to them as `(fields, message)`, which `console` prints both of.
 */
export type LoggerOption = Pick<Logger, "debug" | "info" | "warn" | "error"> & {
  child?: ((bindings: Record<string, unknown>) => LoggerOption) | undefined;
};

/** The default: logs nothing. */
export const SILENT_LOGGER: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => SILENT_LOGGER,
};

const LEVELS = ["debug", "info", "warn", "error"] as const;
type Level = (typeof LEVELS)[number];

/**
 * The `logger` option of a component as a `Logger`: `SILENT_LOGGER` when none is given; the logger itself
 * when it has `child`; one whose `child` adds its bindings to each record's fields when it has only the
 * four levels (`console`); and a `ConfigError` naming `component` otherwise, so a wrong logger (a bare
 * function, a missing level, a `child` that is not a function) fails at setup rather than at the first record.
 */
export function loggerOption(value: unknown, component: string): Logger {
  if (value === undefined) return SILENT_LOGGER;
  const object = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const missing = LEVELS.filter((level) => typeof object[level] !== "function");
  const child = object.child;
  if (missing.length > 0 || (child !== undefined && typeof child !== "function")) {
    const problem = missing.length > 0 ? `missing ${missing.join(", ")}` : "its `child` is not a function";
    throw new ConfigError(
      `\`logger\` must have debug, info, warn and error methods (\`console\` will do; child is used when present); ${problem}`,
      { component, option: "logger" },
    );
  }
  if (typeof child === "function") return value as Logger;
  return new BoundLogger(value as LoggerOption, undefined);
}

/**
 * A logger without `child` given children: each record's fields start with the bindings of every
 * ancestor, as pino's children write them. Methods are called on the logger itself (`this` kept).
 */
class BoundLogger implements Logger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;

  constructor(
    private readonly target: LoggerOption,
    private readonly bindings: Record<string, unknown> | undefined,
  ) {
    this.debug = this.method("debug");
    this.info = this.method("info");
    this.warn = this.method("warn");
    this.error = this.method("error");
  }

  child(bindings: Record<string, unknown>): Logger {
    return new BoundLogger(this.target, { ...this.bindings, ...bindings });
  }

  private method(level: Level): LogMethod {
    const { target, bindings } = this;
    const write = target[level] as (first: object | string, message?: string) => void;
    return (first: object | string, message?: string) => {
      if (bindings === undefined) {
        // As called: `console.info("text")` must not print a trailing `undefined`.
        if (message === undefined) write.call(target, first);
        else write.call(target, first, message);
      } else if (typeof first === "string") write.call(target, bindings, first);
      else if (message === undefined) write.call(target, { ...bindings, ...first });
      else write.call(target, { ...bindings, ...first }, message);
    };
  }
}
