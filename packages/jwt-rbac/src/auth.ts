import type { JWTPayload } from "jose";
import { decisionRecorder, webCryptoSha256Hex } from "./audit/recorder.js";
import { resolveConfig } from "./config.js";
import { AuthError, isAuthError, withResourceMetadata } from "./errors.js";
import type { JwtRbacOptions } from "./options.js";
import { type RouteAccess, routeAccess } from "./rbac/access.js";
import { Authorizer } from "./rbac/authorize.js";
import { type CanonicalPath, pathReader, relativeTo } from "./rbac/canonical-path.js";
import { compileRoute, RouteTable } from "./rbac/routes.js";
import { type ScopeSet, scopeSet } from "./rbac/scopes.js";
import {
  type AuthenticatedState,
  type AuthState,
  anonymousState,
  authenticatedState,
  NO_IDS,
} from "./state.js";
import { TokenCache } from "./token/cache.js";
import { boundAsBearerError } from "./token/dpop/errors.js";
import { DpopGate } from "./token/dpop/index.js";
import { type HeadersInput, isCorsPreflight, readHeader } from "./token/headers.js";
import { kindOf, type OpaqueOutcome, OpaqueTokens } from "./token/introspection/index.js";
import {
  hostOrigin,
  type PublicOriginRequest,
  parseOrigin,
  schemeOf,
  targetPath,
} from "./token/public-origin.js";
import { resolveToken } from "./token/resolve.js";
import type { Runtime } from "./token/signature-types.js";
import { loadTrust, type Trust } from "./token/trust.js";
import { TokenVerifier, type VerifyResult } from "./token/verify.js";
import { authTracer, headerAlgorithm, traced } from "./tracing.js";

/** The framework-free view of a request. */
export interface AuthRequest {
  readonly method: string;
  /**
   * The path the framework routes on, relative to where the middleware is mounted, with or without a
   * query string; as received (percent-escapes and all). See `canonicalPath` for how it is read.
   */
  readonly path: string;
  /**
   * The prefix of `path` where the middleware's app is mounted (Hono `app.route`/`basePath`, Express
   * `req.baseUrl`, the Fetch adapter's `basePath`): mappings and exclusions are matched on the rest.
   */
  readonly basePath?: string | undefined;
  readonly headers: HeadersInput;
  /** Parsed cookies, if the framework has them; otherwise the `Cookie` header is read. */
  readonly cookies?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * The request's own origin (`scheme://host[:port]`) for the cross-site check of a cookie-authenticated unsafe
   * request: an adapter of its own may pass it; when absent (as the bundled adapters leave it), the origin is
   * `publicOrigin`, else `scheme` and the validated `Host` header (see `publicOrigin`). A value or a function,
   * never a getter, which kept every request alive longer (bench/notes/profiles.md, "Why the code is as it is").
   */
  readonly origin?: string | (() => string | undefined) | undefined;
  /**
   * The request target as received, mount prefix included: the path (`/api/agents/a1?x`) or an absolute URL.
   * Only its path is read, for a DPoP proof's `htu`; its authority never is (the origin is `publicOrigin`, else
   * `scheme` and the validated `Host` header). Needed only for DPoP proofs, so it may be a function called only then.
   */
  readonly url?: string | (() => string | undefined) | undefined;
  /**
   * The scheme the request arrived on (`"http"` or `"https"`), as the server knows it (the connection, or a proxy
   * header the application trusts); default: the scheme of `url` when it is absolute. Not read with `publicOrigin`.
   */
  readonly scheme?: string | (() => string | undefined) | undefined;
}

/** What `authenticate` resolves to: the request's state, or the `AuthError` to answer with. */
export type AuthResult<C extends object = JWTPayload> =
  | {
      readonly ok: true;
      readonly state: AuthState<C>;
      /** Response headers the adapter adds to the answer (`DPoP-Nonce`). */
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly ok: false; readonly error: AuthError };

/** The framework-free authenticator `createJwtAuth` builds once; the adapters wrap it. */
export interface JwtAuth<C extends object = JWTPayload> {
  /** Never rejects for a bad request; rejects only when the keys could not be imported (see `ready`). */
  authenticate(request: AuthRequest): Promise<AuthResult<C>>;
  /**
   * The same answer as `authenticate()`, returned as is when it needs no waiting (a cached token, or
   * the node:crypto verifier once the keys are loaded), else as a Promise. For adapters on a hot path:
   * a cache hit then costs no promise hop. Throws or rejects only where `authenticate()` rejects.
   */
  authenticateNow(request: AuthRequest): AuthResult<C> | Promise<AuthResult<C>>;
  /** Settles when every key is imported; rejects with a ConfigError when one cannot be. */
  readonly ready: Promise<void>;
  /** Drops every cached verified token. */
  clearCache(): void;
  /** `"node:crypto"` or `"webcrypto"`: which signature verifier this build uses. */
  readonly verifier: string;
  /** What a route needs by this instance's tables (excluded paths, scope mappings), for documentation. */
  routeAccess(method: string, path: string): RouteAccess;
}

/** What a verified token yields, built once and then shared by every request carrying that token. */
interface VerifiedToken {
  /** `{ ok: true, state }` with no listing ids: the answer for most routes, reused as is. */
  readonly result: { readonly ok: true; readonly state: AuthState };
  /** Parsed scopes, only when authorization is on. */
  readonly held: ScopeSet | undefined;
  /** The key the token is bound to (`cnf.jkt`); `""` for a binding this package cannot check. */
  readonly jkt: string | undefined;
}

/**
 * Whether a request skips authentication. The literal paths (all of the defaults) are one `Set`
 * lookup of the canonical path; the route trie is walked only when a pattern has wildcards.
 */
function excludedPaths(
  patterns: readonly string[],
  caseSensitive: boolean,
): (method: string, path: CanonicalPath) => boolean {
  const routes = patterns.map((path) => compileRoute(path, true, false));
  const table = new RouteTable(routes, { caseSensitive });
  const literals = new Set<string>();
  for (const route of routes) {
    if (route.wildcards > 0) continue;
    const path = `/${route.segments.join("/")}`;
    literals.add(caseSensitive ? path : path.toLowerCase());
  }
  const walk = literals.size < routes.length;
  return (method, { path, segments }) =>
    literals.has(caseSensitive ? path : path.toLowerCase()) ||
    (walk && table.match(method, segments) !== undefined);
}

/** A request field that is a value or a function answering it. */
function fieldValue(field: string | (() => string | undefined) | undefined): string | undefined {
  return typeof field === "function" ? field() : field;
}

/** `createJwtAuth` on a given runtime build (the public entry points bind their own). */
export function createJwtAuthOn<C extends object = JWTPayload>(
  runtime: Runtime,
  options: JwtRbacOptions,
): JwtAuth<C> {
  const config = resolveConfig(options, runtime);
  const { logger } = config;
  const cache =
    config.cache === false ? undefined : new TokenCache<VerifiedToken>(config.cache.max, config.cache.ttlMs);
  const verifier = new TokenVerifier(config, runtime);
  const excluded = excludedPaths(config.excludedRoutePaths, config.caseSensitiveRoutes);
  const authorizer = config.authorization ? new Authorizer(config) : undefined;
  const anonymous: AuthResult<C> = { ok: true, state: anonymousState(config.authorization) };
  const toleranceMs = config.clockTolerance * 1000;
  const dpop = config.dpop === undefined ? undefined : new DpopGate(config.dpop, runtime, logger);
  const opaque = config.opaque === undefined ? undefined : new OpaqueTokens(config.opaque, logger);
  const readPath = pathReader();
  const { publicOrigin } = config;
  let warnedPublicOrigin = false;

  /** `publicOrigin` as a function: its answer for this request, when it is an origin. */
  function askPublicOrigin(
    answer: (request: PublicOriginRequest) => string | undefined,
    request: AuthRequest,
  ): string | undefined {
    let origin: string | undefined;
    try {
      origin = parseOrigin(
        answer({ method: request.method, header: (name) => readHeader(request.headers, name.toLowerCase()) }),
      );
    } catch {
      origin = undefined;
    }
    if (origin === undefined && !warnedPublicOrigin) {
      warnedPublicOrigin = true;
      logger.warn(
        "jwt-rbac: publicOrigin() answered no origin (scheme://host[:port]) for a request; its DPoP proof is refused",
      );
    }
    return origin;
  }

  /** The origin this request was sent to, by the one rule of token/public-origin.ts. */
  function ownOrigin(request: AuthRequest): string | undefined {
    if (typeof publicOrigin === "string") return publicOrigin;
    if (publicOrigin !== undefined) return askPublicOrigin(publicOrigin, request);
    const scheme = typeof request.scheme === "function" ? request.scheme() : request.scheme;
    const url = scheme === undefined ? fieldValue(request.url) : undefined;
    return hostOrigin(scheme ?? schemeOf(url), readHeader(request.headers, "host"));
  }

  /** The cross-site check's own origin: an adapter's own, unless `publicOrigin` says it. */
  function csrfOrigin(request: AuthRequest): string | undefined {
    if (publicOrigin === undefined && request.origin !== undefined) return fieldValue(request.origin);
    return ownOrigin(request);
  }

  /** The URL a DPoP proof must name: the request's origin and the path it was routed on, never a query. */
  function proofUrl(request: AuthRequest): string | undefined {
    const path = targetPath(fieldValue(request.url));
    const origin = path === undefined ? undefined : ownOrigin(request);
    return origin === undefined ? undefined : origin + path;
  }

  const recorder = decisionRecorder(options, logger, runtime.sha256Hex ?? webCryptoSha256Hex);
  // The verified token behind a refusal taken after verification (scopes, binding), for the audit only.
  const verifiedOf = recorder === undefined ? undefined : new WeakMap<object, AuthenticatedState>();

  let trust: Trust | undefined;
  // A remote key set whose content changed: tokens verified with the old keys must be verified again.
  const loading = loadTrust(config, runtime.verifier, logger, () => cache?.clear());
  const ready = loading.then((loaded) => {
    trust = loaded;
  });

  function toVerifiedToken(
    token: string,
    payload: Record<string, unknown>,
    nowMs: number,
    notAfterMs?: number,
  ): VerifiedToken {
    // Shared by every request with this token: typed readonly, and never mutated here.
    const state = authenticatedState(token, payload, config, config.authorization) as AuthState;
    const entry: VerifiedToken = {
      result: { ok: true, state },
      held:
        authorizer === undefined ? undefined : scopeSet(state.scopes, config.adminScope, config.scopeAliases),
      jkt: state.authenticated ? state.confirmation?.jkt : undefined,
    };
    if (cache !== undefined) {
      const exp = payload.exp;
      const notAfter =
        notAfterMs ?? (config.validate && typeof exp === "number" ? exp * 1000 + toleranceMs : undefined);
      cache.set(token, entry, nowMs, notAfter);
    }
    return entry;
  }

  function verifiedTokenOrError(
    token: string,
    verified: VerifyResult,
    nowMs: number,
  ): VerifiedToken | AuthError {
    return verified instanceof AuthError ? verified : toVerifiedToken(token, verified.payload, nowMs);
  }

  function settleOpaque(token: string, outcome: OpaqueOutcome, nowMs: number): VerifiedToken | AuthError {
    return outcome instanceof AuthError
      ? outcome
      : toVerifiedToken(token, outcome.claims, nowMs, outcome.notAfterMs);
  }

  /** Synchronous whenever the keys are loaded and the verifier is synchronous (node:crypto). */
  function verifyToken(
    token: string,
    nowMs: number,
  ): VerifiedToken | AuthError | Promise<VerifiedToken | AuthError> {
    if (opaque?.handles(token)) {
      // A JWT sent to introspection is held to the same header rules (requireTyp) as one verified here.
      const refused = kindOf(token) === "jwt" ? verifier.headerRefusal(token) : undefined;
      if (refused !== undefined) return refused;
      const outcome = opaque.verify(token, nowMs);
      return outcome instanceof Promise
        ? outcome.then((settled) => settleOpaque(token, settled, nowMs))
        : settleOpaque(token, outcome, nowMs);
    }
    if (trust === undefined) {
      return loading.then(async (loaded) =>
        verifiedTokenOrError(token, await verifier.verify(token, loaded, nowMs), nowMs),
      );
    }
    const verified = verifier.verify(token, trust, nowMs);
    return verified instanceof Promise
      ? verified.then((result) => verifiedTokenOrError(token, result, nowMs))
      : verifiedTokenOrError(token, verified, nowMs);
  }

  function refuse(method: string, error: AuthError): AuthResult<C> {
    logger.debug(`jwt-rbac: ${method} refused: ${error.reason}`);
    const { resourceMetadata } = config;
    return {
      ok: false,
      error: resourceMetadata === undefined ? error : withResourceMetadata(error, resourceMetadata),
    };
  }

  /** A refusal of a verified token: the audit reports who it was. */
  function refuseVerified(method: string, error: AuthError, entry: VerifiedToken): AuthResult<C> {
    const result = refuse(method, error);
    verifiedOf?.set(result, entry.result.state as AuthenticatedState);
    return result;
  }

  function decide(method: string, path: CanonicalPath, entry: VerifiedToken | AuthError): AuthResult<C> {
    if (entry instanceof AuthError) return refuse(method, entry);
    // Without `dpop`, a bound token cannot be checked: refused, never taken for a bearer token.
    if (entry.jkt !== undefined && dpop === undefined)
      return refuseVerified(method, boundAsBearerError(), entry);
    if (authorizer === undefined) return entry.result as AuthResult<C>;
    const allowed = authorizer.authorize(method, path, entry.held as ScopeSet);
    if (allowed instanceof AuthError) return refuseVerified(method, allowed, entry);
    if (allowed === NO_IDS) return entry.result as AuthResult<C>;
    const state = { ...entry.result.state, accessibleResourceIds: allowed };
    return { ok: true, state: state as AuthState<C> };
  }

  function decideRequest(request: AuthRequest): AuthResult<C> | Promise<AuthResult<C>> {
    const method = request.method.toUpperCase();
    // First, even for a preflight: a path routers could read differently is refused before any handler.
    const full = readPath(request.path);
    const path =
      request.basePath === undefined || isAuthError(full) ? full : relativeTo(full, request.basePath);
    if (isAuthError(path)) return refuse(method, path);
    // A CORS preflight carries no credentials: it passes on, unauthenticated, to the CORS middleware. Any
    // other OPTIONS is authorized like every method (an `app.all` handler runs for it).
    if (method === "OPTIONS" && isCorsPreflight(request.headers)) return anonymous;
    if (excluded(method, path)) return anonymous;
    if (dpop !== undefined) return authenticateDpop(dpop, request, method, path);

    const token = resolveToken(config, method, request, csrfOrigin);
    if (typeof token !== "string") return refuse(method, token);

    const nowMs = Date.now();
    const entry = cache?.get(token, nowMs) ?? verifyToken(token, nowMs);
    return entry instanceof Promise
      ? entry.then((settled) => decide(method, path, settled))
      : decide(method, path, entry);
  }

  /** The request through the DPoP gate (see token/dpop): asynchronous, as a proof is checked. */
  async function authenticateDpop(
    gate: DpopGate,
    request: AuthRequest,
    method: string,
    path: CanonicalPath,
  ): Promise<AuthResult<C>> {
    const nowMs = Date.now();
    const dpopToken = gate.dpopToken(request.headers, config.tokenHeaderKey);
    const dpopScheme = dpopToken !== undefined;
    const fail = async (error: AuthError, verified?: AuthenticatedState): Promise<AuthResult<C>> => {
      const result: AuthResult<C> = { ok: false, error: await gate.refusal(error, dpopScheme, nowMs) };
      if (verified !== undefined) verifiedOf?.set(result, verified);
      return result;
    };
    const token = dpopToken ?? resolveToken(config, method, request, csrfOrigin);
    if (typeof token !== "string") return fail((refuse(method, token) as { error: AuthError }).error);
    const entry = await (cache?.get(token, nowMs) ?? verifyToken(token, nowMs));
    if (entry instanceof AuthError) return fail((refuse(method, entry) as { error: AuthError }).error);
    const proofRequest = { method: request.method, headers: request.headers, url: () => proofUrl(request) };
    const refused = await gate.check(proofRequest, token, entry.jkt, dpopScheme, nowMs);
    const verified = entry.result.state as AuthenticatedState;
    if (refused !== undefined) return fail((refuse(method, refused) as { error: AuthError }).error, verified);
    const result = decide(method, path, entry);
    if (!result.ok) return fail(result.error, verified);
    const nonce = gate.offer(nowMs);
    // A state of this request's own: the cached one is shared, and the headers belong to this answer.
    if (nonce === undefined) return result;
    return { ok: true, state: { ...result.state }, headers: { "DPoP-Nonce": await nonce } };
  }

  /** What the audit reads from a request, computed only when a decision is reported. */
  function decisionSources(request: AuthRequest, method: string) {
    return {
      route() {
        const full = readPath(request.path);
        const path =
          request.basePath === undefined || isAuthError(full) ? full : relativeTo(full, request.basePath);
        if (isAuthError(path)) return undefined;
        return { path: path.path, required: authorizer?.required(method, path) };
      },
      token() {
        const bound = dpop?.dpopToken(request.headers, config.tokenHeaderKey);
        const token = typeof bound === "string" ? bound : resolveToken(config, method, request);
        return typeof token === "string" ? token : undefined;
      },
    };
  }

  const report = (request: AuthRequest, result: AuthResult<C>): AuthResult<C> => {
    const method = request.method.toUpperCase();
    recorder?.(method, result, verifiedOf?.get(result), decisionSources(request, method));
    return result;
  };

  /** The token a request carries and whether it is cached, for the span only (read again, never trusted). */
  const spanFacts = (request: AuthRequest) => () => {
    const token = decisionSources(request, request.method.toUpperCase()).token();
    if (token === undefined) return { algorithm: undefined, cacheHit: false };
    return {
      algorithm: headerAlgorithm(token, runtime.base64Url),
      cacheHit: cache?.get(token, Date.now()) !== undefined,
    };
  };

  /** In a span when an OpenTelemetry SDK is registered; one property read otherwise. */
  const decideTraced = (request: AuthRequest): AuthResult<C> | Promise<AuthResult<C>> => {
    const tracer = authTracer();
    return tracer === undefined
      ? decideRequest(request)
      : traced(tracer, spanFacts(request), () => decideRequest(request));
  };

  /** With `onDecision`: each answer is reported once decided, and handed back as it is. */
  const authenticateNow =
    recorder === undefined
      ? decideTraced
      : (request: AuthRequest): AuthResult<C> | Promise<AuthResult<C>> => {
          const result = decideTraced(request);
          return result instanceof Promise
            ? result.then((settled) => report(request, settled))
            : report(request, result);
        };

  const accessTables = {
    excluded,
    required: authorizer === undefined ? undefined : authorizer.required.bind(authorizer),
    unmappedRoutes: config.unmappedRoutes,
    adminScope: config.adminScope,
  };

  return {
    ready,
    verifier: runtime.verifier.name,
    routeAccess: (method, path) => routeAccess(accessTables, method, path),
    clearCache: () => cache?.clear(),
    authenticateNow,
    async authenticate(request: AuthRequest): Promise<AuthResult<C>> {
      return authenticateNow(request);
    },
  };
}
