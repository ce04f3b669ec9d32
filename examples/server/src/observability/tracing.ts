import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "pino";
import { routeLabel } from "./metrics.js";

/** The `service.name` of the server's spans unless `OTEL_SERVICE_NAME` says otherwise. */
export const DEFAULT_SERVICE_NAME = "agent-platform-server";

export interface Tracing {
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

let started: Tracing | undefined;

/**
 * Starts the OpenTelemetry Node SDK, configured by the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_TRACES_SAMPLER`, …), traces only, once per process; loaded only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set, so a server without it never loads the SDK. The packages' spans
 * (jwt-rbac, messaging) reach it through the API's global registration.
 */
export async function startTracing(serviceName: string, logger: Logger): Promise<Tracing> {
  if (started !== undefined) return started;
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const sdk = new NodeSDK({ serviceName });
  sdk.start();
  logger.info({ service_name: serviceName }, "OpenTelemetry tracing started (OTLP over HTTP)");
  const tracing: Tracing = {
    async shutdown() {
      started = undefined;
      await sdk.shutdown().catch((error: unknown) => {
        logger.warn({ err: error }, "OpenTelemetry shutdown failed; spans may be lost");
      });
    },
  };
  started = tracing;
  return tracing;
}

const headerGetter = {
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
  keys: (carrier: Headers) => [...carrier.keys()],
};

/**
 * A server span per request, the child of the caller's span when the request carries a `traceparent` (W3C trace
 * context, honoured as the standard says: a malformed one is ignored and a new trace starts), named
 * `<METHOD> <route template>`, active while the request runs so the packages' spans nest under it.
 */
export function tracingMiddleware(): MiddlewareHandler {
  const tracer = trace.getTracer("@agent-platform/server");
  return (c, next) => {
    const parent = propagation.extract(context.active(), c.req.raw.headers, headerGetter);
    const method = c.req.method;
    return tracer.startActiveSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": method } },
      parent,
      async (span) => {
        try {
          await next();
        } finally {
          const route = routeLabel(c);
          span.updateName(`${method} ${route}`);
          span.setAttribute("http.route", route);
          span.setAttribute("http.response.status_code", c.res.status);
          if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
    );
  };
}
