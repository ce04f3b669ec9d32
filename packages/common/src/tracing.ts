/**
 * OpenTelemetry tracing for the agent-platform packages, through the API's global registration only: an SDK
 * (`@opentelemetry/sdk-node` or any other) registers its tracer provider under
 * `globalThis[Symbol.for("opentelemetry.js.api.1")]`, which every copy of `@opentelemetry/api` 1.x reads. The
 * packages read it the same way, so they neither import nor require the API package (an optional peer
 * dependency): without a registered provider, `tracerFor` answers undefined and the instrumented code runs as
 * it did, paying a counter (and one property read every ABSENT_PROVIDER_RECHECK operations).
 */

/** `SpanStatusCode.ERROR` of the API. */
export const SPAN_ERROR = 2;
/** `SpanKind` values of the API. */
export const SpanKinds = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;

/** A span attribute's value, as the API takes it. */
export type SpanAttributeValue = string | number | boolean | readonly string[];

/** The part of the API's `SpanContext` the packages pass around (a stored link target). */
export interface TraceContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
}

/** The part of the API's `Span` the packages use. */
export interface TraceSpan {
  setAttribute(key: string, value: SpanAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  spanContext(): TraceContext;
  end(): void;
}

/** The options of a span the packages start: kind, attributes, links. */
export interface SpanOptions {
  readonly kind?: number;
  readonly attributes?: Readonly<Record<string, SpanAttributeValue>>;
  readonly links?: readonly {
    readonly context: TraceContext;
    readonly attributes?: Readonly<Record<string, SpanAttributeValue>>;
  }[];
}

/** The part of the API's `Tracer` the packages use. */
export interface Tracer {
  startActiveSpan<F>(name: string, options: SpanOptions, fn: (span: TraceSpan) => F): F;
}

interface TracerProvider {
  getTracer(name: string, version?: string): Tracer;
}

const GLOBAL = Symbol.for("opentelemetry.js.api.1");

/**
 * While no provider is registered, how many operations pass between two looks at the global registration: the
 * look is a read of a property absent from the global object, V8's slow path (5-8 ns), which is 1-2% of a cached
 * token's whole authentication. So a provider registered after the operations began is picked up within this
 * many of them; one registered before is picked up by the first.
 */
export const ABSENT_PROVIDER_RECHECK = 64;

/**
 * The tracer of `name` from the registered provider, or undefined while none is registered. Called per
 * operation: a provider registered (or replaced, or removed) after the package was set up is picked up, within
 * ABSENT_PROVIDER_RECHECK operations when there was none; the tracer is kept per provider.
 */
export function tracerFor(name: string, version?: string): () => Tracer | undefined {
  let provider: TracerProvider | undefined;
  let tracer: Tracer | undefined;
  let absentFor = 0;
  return () => {
    if (absentFor > 0) {
      absentFor--;
      return undefined;
    }
    const registered = (globalThis as { [GLOBAL]?: { trace?: TracerProvider } })[GLOBAL]?.trace;
    if (registered === undefined) {
      absentFor = ABSENT_PROVIDER_RECHECK - 1;
      return undefined;
    }
    if (registered !== provider) {
      provider = registered;
      tracer = registered.getTracer(name, version);
    }
    return tracer;
  };
}

/**
 * Runs `fn` in a new active span (its child spans nest under it), ending the span when `fn` returns or, for a
 * promise, when it settles; a throw or rejection marks the span as an error (with the error's class name only,
 * never a message that could carry input) and is passed on. Without a tracer, `fn` runs as it is.
 */
export function inSpan<T>(
  tracer: Tracer | undefined,
  name: string,
  options: SpanOptions,
  fn: (span: TraceSpan | undefined) => T,
): T {
  if (tracer === undefined) return fn(undefined);
  return tracer.startActiveSpan(name, options, (span) => {
    const failed = (error: unknown) => {
      span.setStatus({ code: SPAN_ERROR, message: error instanceof Error ? error.name : "error" });
      span.end();
    };
    let result: T;
    try {
      result = fn(span);
    } catch (error) {
      failed(error);
      throw error;
    }
    if (result instanceof Promise) {
      return result.then(
        (value) => {
          span.end();
          return value;
        },
        (error: unknown) => {
          failed(error);
          throw error;
        },
      ) as T;
    }
    span.end();
    return result;
  });
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span's context as a W3C `traceparent` value, to store beside what it produced. */
export function traceparentOf(span: TraceSpan): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** A stored `traceparent` as a remote span context to link to; undefined when it is not one (or all zeros). */
export function traceContextOf(traceparent: string | null | undefined): TraceContext | undefined {
  const match = traceparent == null ? null : TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}
