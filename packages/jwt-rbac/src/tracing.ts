import { inSpan, type Tracer, tracerFor } from "@agent-platform/common/internal";
import type { AuthRequest, AuthResult } from "./request.js";
import { isSupportedAlgorithm } from "./token/verify/algorithms.js";
import type { Base64UrlCodec } from "./token/verify/base64url.js";

/** The span of each authentication, when an OpenTelemetry SDK is registered (see docs/audit.md, "Tracing"). */
export const AUTHENTICATE_SPAN = "jwt-rbac authenticate";

export const authTracer: () => Tracer | undefined = tracerFor("@agent-platform/jwt-rbac");

/** The `alg` a JWT's header names, when it is one this package knows; never anything else from the token. */
export function headerAlgorithm(token: string, codec: Base64UrlCodec): string | undefined {
  const dot = token.indexOf(".");
  if (dot <= 0 || dot > 1024) return undefined;
  try {
    const alg = (JSON.parse(codec.text(token, 0, dot) ?? "null") as { alg?: unknown } | null)?.alg;
    return typeof alg === "string" && isSupportedAlgorithm(alg) ? alg : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `decide` in a `jwt-rbac authenticate` span with `result` (`allowed`/`denied`), `reason` (the `AuthError` reason,
 * or `ok`), `algorithm` (the token header's, when a JWT) and `cache_hit`. The answer is the one `decide` gives.
 */
export function traced<C extends object>(
  tracer: Tracer,
  before: () => { algorithm: string | undefined; cacheHit: boolean },
  decide: () => AuthResult<C> | Promise<AuthResult<C>>,
): AuthResult<C> | Promise<AuthResult<C>> {
  const { algorithm, cacheHit } = before();
  return inSpan(
    tracer,
    AUTHENTICATE_SPAN,
    { attributes: { cache_hit: cacheHit, ...(algorithm === undefined ? {} : { algorithm }) } },
    (span) => {
      const record = (result: AuthResult<C>) => {
        span?.setAttribute("result", result.ok ? "allowed" : "denied");
        span?.setAttribute("reason", result.ok ? "ok" : result.error.reason);
        return result;
      };
      const result = decide();
      return result instanceof Promise ? result.then(record) : record(result);
    },
  );
}

/** What a span records before the decision: the token header's algorithm and whether the token was cached. */
export type SpanFacts = (request: AuthRequest) => () => { algorithm: string | undefined; cacheHit: boolean };

/**
 * `decide` in a span when an OpenTelemetry SDK is registered; a countdown otherwise (see `tracerFor`). The
 * `instrumentation:` statement is what the bench's uninstrumented build drops (bench/src/base-build.ts).
 */
export function withSpans<C extends object>(
  decide: (request: AuthRequest) => AuthResult<C> | Promise<AuthResult<C>>,
  facts: SpanFacts,
): (request: AuthRequest) => AuthResult<C> | Promise<AuthResult<C>> {
  let decideTraced = decide;
  instrumentation: decideTraced = (request) => {
    const tracer = authTracer();
    return tracer === undefined ? decide(request) : traced(tracer, facts(request), () => decide(request));
  };
  return decideTraced;
}
