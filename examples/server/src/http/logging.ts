import type { MiddlewareHandler } from "hono";
import pino, { type DestinationStream, type Logger } from "pino";
import type { AppEnv } from "./env.js";

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "agent-platform-server" },
      // Defence in depth: nothing here logs headers or tokens, and these keys stay censored if a later change does.
      redact: {
        paths: ["authorization", "token", "*.authorization", "*.token", "headers.cookie", "*.headers.cookie"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}

/**
 * One log line per request with its id, method, path and status. The path is logged without its query
 * string, which can carry secrets (the WhatsApp handshake's `hub.verify_token`).
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
