/**
 * The logger the package writes to: pino's method shape (fields first, then the message), so a pino
 * logger — the server's — is passed as it is, and so is any logger with the same four levels and `child`.
 * Fields never carry tokens or secrets.
 */
export interface MessagingLogger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  child(bindings: Record<string, unknown>): MessagingLogger;
}

export interface LogMethod {
  (fields: object, message?: string): void;
  (message: string): void;
}

/** The default: logs nothing. */
export const SILENT_LOGGER: MessagingLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => SILENT_LOGGER,
};
