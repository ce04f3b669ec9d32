import type { JWTPayload } from "jose";
import { type AuditTrail, audited, auditTrail, type DecisionSources, refusalOf } from "./audit/index.js";
import { type ResolvedConfig, resolveConfig } from "./config.js";
import { AuthError, isAuthError, withResourceMetadata } from "./errors.js";
import type { JwtRbacOptions } from "./options.js";
import { type RouteAccess, routeAccess } from "./rbac/access.js";
import { Authorizer } from "./rbac/authorize.js";
import { type CanonicalPath, pathReader, relativeTo } from "./rbac/canonical-path.js";
import { compileRoute, RouteTable } from "./rbac/routes.js";
import type { ScopeSet } from "./rbac/scopes.js";
import type { AuthRequest, AuthResult } from "./request.js";
import { type AuthState, anonymousState, NO_IDS } from "./state.js";
import {
  boundAsBearerError,
  DpopGate,
  isCorsPreflight,
  type RequestOrigins,
  type Runtime,
  requestOrigins,
  resolveToken,
} from "./token/index.js";
import { headerAlgorithm, type SpanFacts, withSpans } from "./tracing.js";
import { type VerifiedToken, VerifiedTokens } from "./verified-tokens.js";

export type { AuthRequest, AuthResult } from "./request.js";

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

/** The parts a request goes through, resolved once by `createJwtAuthOn`. */
interface Parts {
  readonly config: ResolvedConfig;
  readonly runtime: Runtime;
  readonly tokens: VerifiedTokens;
  readonly authorizer: Authorizer | undefined;
  readonly dpop: DpopGate | undefined;
  readonly origins: RequestOrigins;
  readonly readPath: ReturnType<typeof pathReader>;
  /** With `onDecision` only. */
  readonly audit: AuditTrail | undefined;
}

/** `createJwtAuth` on a given runtime build (the public entry points bind their own). */
export function createJwtAuthOn<C extends object = JWTPayload>(
  runtime: Runtime,
  options: JwtRbacOptions,
): JwtAuth<C> {
  const config = resolveConfig(options, runtime);
  const authorizer = config.authorization ? new Authorizer(config) : undefined;
  const parts: Parts = {
    config,
    runtime,
    tokens: new VerifiedTokens(config, runtime, authorizer !== undefined),
    authorizer,
    dpop: config.dpop === undefined ? undefined : new DpopGate(config.dpop, runtime, config.logger),
    origins: requestOrigins(config.publicOrigin, config.logger),
    readPath: pathReader(),
    audit: auditTrail(config.audit, config.logger, runtime.sha256Hex),
  };
  const { tokens, dpop, readPath } = parts;
  const excluded = excludedPaths(config.excludedRoutePaths, config.caseSensitiveRoutes);
  const anonymous: AuthResult<C> = { ok: true, state: anonymousState(config.authorization) };

  function decideRequest(request: AuthRequest): AuthResult<C> | Promise<AuthResult<C>> {
    const method = request.method.toUpperCase();
    // First, even for a preflight: a path routers could read differently is refused before any handler.
    const full = readPath(request.path);
    const path =
      request.basePath === undefined || isAuthError(full) ? full : relativeTo(full, request.basePath);
    if (isAuthError(path)) return refuse(config, method, path);
    // A CORS preflight carries no credentials: it passes on, unauthenticated, to the CORS middleware. Any
    // other OPTIONS is authorized like every method (an `app.all` handler runs for it).
    if (method === "OPTIONS" && isCorsPreflight(request.headers)) return anonymous;
    if (excluded(method, path)) return anonymous;
    if (dpop !== undefined) return authenticateDpop(parts, dpop, request, method, path);

    const token = resolveToken(config, method, request, parts.origins.csrf);
    if (typeof token !== "string") return refuse(config, method, token);

    const entry = tokens.get(token, Date.now());
    return entry instanceof Promise
      ? entry.then((settled) => decide(parts, method, path, settled))
      : decide(parts, method, path, entry);
  }

  // Each answer in a span (with an OpenTelemetry SDK), then reported to `onDecision` (with one).
  const traced = withSpans(decideRequest, (request) => spanFacts(parts, request));
  const authenticateNow = audited(parts.audit, traced, (request, method) =>
    decisionSources(parts, request, method),
  );

  const accessTables = {
    excluded,
    required: authorizer === undefined ? undefined : authorizer.required.bind(authorizer),
    unmappedRoutes: config.unmappedRoutes,
    adminScope: config.adminScope,
  };

  return {
    ready: tokens.ready,
    verifier: runtime.verifier.name,
    routeAccess: (method, path) => routeAccess(accessTables, method, path),
    clearCache: () => tokens.clear(),
    authenticateNow,
    async authenticate(request: AuthRequest): Promise<AuthResult<C>> {
      return authenticateNow(request);
    },
  };
}

function refuse<C extends object>(config: ResolvedConfig, method: string, error: AuthError): AuthResult<C> {
  config.logger.debug(`jwt-rbac: ${method} refused: ${error.reason}`);
  const { resourceMetadata } = config;
  return {
    ok: false,
    error: resourceMetadata === undefined ? error : withResourceMetadata(error, resourceMetadata),
  };
}

/** A verified token (or the error it got) on this route: the scopes it needs, a binding it cannot prove. */
function decide<C extends object>(
  { config, authorizer, dpop, audit }: Parts,
  method: string,
  path: CanonicalPath,
  entry: VerifiedToken | AuthError,
): AuthResult<C> {
  if (entry instanceof AuthError) return refuse(config, method, entry);
  const verified = entry.result.state;
  // Without `dpop`, a bound token cannot be checked: refused, never taken for a bearer token.
  if (entry.jkt !== undefined && dpop === undefined)
    return refusalOf(audit, refuse(config, method, boundAsBearerError()), verified);
  if (authorizer === undefined) return entry.result as AuthResult<C>;
  const allowed = authorizer.authorize(method, path, entry.held as ScopeSet);
  if (allowed instanceof AuthError) return refusalOf(audit, refuse(config, method, allowed), verified);
  if (allowed === NO_IDS) return entry.result as AuthResult<C>;
  const state = { ...entry.result.state, accessibleResourceIds: allowed };
  return { ok: true, state: state as AuthState<C> };
}

/** The request through the DPoP gate (see token/dpop): asynchronous, as a proof is checked. */
async function authenticateDpop<C extends object>(
  parts: Parts,
  gate: DpopGate,
  request: AuthRequest,
  method: string,
  path: CanonicalPath,
): Promise<AuthResult<C>> {
  const { config, tokens } = parts;
  const nowMs = Date.now();
  const dpopToken = gate.dpopToken(request.headers, config.tokenHeaderKey);
  const dpopScheme = dpopToken !== undefined;
  const fail = async (error: AuthError, verified?: AuthState): Promise<AuthResult<C>> =>
    refusalOf(parts.audit, { ok: false, error: await gate.refusal(error, dpopScheme, nowMs) }, verified);
  const refused = (error: AuthError) => (refuse(config, method, error) as { error: AuthError }).error;
  const token = dpopToken ?? resolveToken(config, method, request, parts.origins.csrf);
  if (typeof token !== "string") return fail(refused(token));
  const entry = await tokens.get(token, nowMs);
  if (entry instanceof AuthError) return fail(refused(entry));
  const proofRequest = {
    method: request.method,
    headers: request.headers,
    url: () => parts.origins.proofUrl(request),
  };
  const proofRefused = await gate.check(proofRequest, token, entry.jkt, dpopScheme, nowMs);
  const verified = entry.result.state;
  if (proofRefused !== undefined) return fail(refused(proofRefused), verified);
  const result = decide<C>(parts, method, path, entry);
  if (!result.ok) return fail(result.error, verified);
  const nonce = gate.offer(nowMs);
  // A state of this request's own: the cached one is shared, and the headers belong to this answer.
  if (nonce === undefined) return result;
  return { ok: true, state: { ...result.state }, headers: { "DPoP-Nonce": await nonce } };
}

/** What the audit reads from a request, computed only when a decision is reported. */
function decisionSources(
  { config, authorizer, dpop, readPath }: Parts,
  request: AuthRequest,
  method: string,
): DecisionSources {
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

/** The token a request carries and whether it is cached, for the span only (read again, never trusted). */
const spanFacts =
  (parts: Parts, request: AuthRequest): ReturnType<SpanFacts> =>
  () => {
    const token = decisionSources(parts, request, request.method.toUpperCase()).token();
    if (token === undefined) return { algorithm: undefined, cacheHit: false };
    return {
      algorithm: headerAlgorithm(token, parts.runtime.base64Url),
      cacheHit: parts.tokens.cached(token, Date.now()) !== undefined,
    };
  };
