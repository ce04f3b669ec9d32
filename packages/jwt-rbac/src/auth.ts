import type { JWTPayload } from "jose";
import { resolveConfig } from "./config.js";
import { AuthError, isAuthError, withResourceMetadata } from "./errors.js";
import type { JwtRbacOptions } from "./options.js";
import { type RouteAccess, routeAccess } from "./rbac/access.js";
import { Authorizer } from "./rbac/authorize.js";
import { type CanonicalPath, pathReader, relativeTo } from "./rbac/canonical-path.js";
import { compileRoute, RouteTable } from "./rbac/routes.js";
import { type ScopeSet, scopeSet } from "./rbac/scopes.js";
import { type AuthState, anonymousState, authenticatedState, NO_IDS } from "./state.js";
import {
  boundAsBearerError,
  DpopGate,
  type HeadersInput,
  isCorsPreflight,
  loadTrust,
  type OpaqueOutcome,
  OpaqueTokens,
  type Runtime,
  resolveToken,
  TokenCache,
  TokenVerifier,
  type Trust,
  type VerifyResult,
} from "./token/index.js";

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
   * The request's own origin (`scheme://host[:port]`): the `Origin` a same-origin request carries,
   * allowed by default for cookie-authenticated unsafe requests. Needed only then, so it may be a function
   * called only then, as the adapters pass (Hono, Fetch: the request URL's; Express: `req.protocol` and the
   * Host header). A value or a function, never a getter, which kept every request alive longer (see
   * bench/notes/profiles.md, "Why the code is as it is").
   */
  readonly origin?: string | (() => string | undefined) | undefined;
  /**
   * The request URL as received, mount prefix included (what a DPoP proof's `htu` names). Needed only
   * for DPoP proofs, so it may be a function called only then.
   */
  readonly url?: string | (() => string | undefined) | undefined;
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

  function decide(method: string, path: CanonicalPath, entry: VerifiedToken | AuthError): AuthResult<C> {
    if (entry instanceof AuthError) return refuse(method, entry);
    // Without `dpop`, a bound token cannot be checked: refused, never taken for a bearer token.
    if (entry.jkt !== undefined && dpop === undefined) return refuse(method, boundAsBearerError());
    if (authorizer === undefined) return entry.result as AuthResult<C>;
    const allowed = authorizer.authorize(method, path, entry.held as ScopeSet);
    if (allowed instanceof AuthError) return refuse(method, allowed);
    if (allowed === NO_IDS) return entry.result as AuthResult<C>;
    const state = { ...entry.result.state, accessibleResourceIds: allowed };
    return { ok: true, state: state as AuthState<C> };
  }

  function authenticateNow(request: AuthRequest): AuthResult<C> | Promise<AuthResult<C>> {
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

    const token = resolveToken(config, method, request);
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
    const fail = async (error: AuthError): Promise<AuthResult<C>> => ({
      ok: false,
      error: await gate.refusal(error, dpopScheme, nowMs),
    });
    const token = dpopToken ?? resolveToken(config, method, request);
    if (typeof token !== "string") return fail((refuse(method, token) as { error: AuthError }).error);
    const entry = await (cache?.get(token, nowMs) ?? verifyToken(token, nowMs));
    if (entry instanceof AuthError) return fail((refuse(method, entry) as { error: AuthError }).error);
    const refused = await gate.check(request, token, entry.jkt, dpopScheme, nowMs);
    if (refused !== undefined) return fail((refuse(method, refused) as { error: AuthError }).error);
    const result = decide(method, path, entry);
    if (!result.ok) return fail(result.error);
    const nonce = gate.offer(nowMs);
    // A state of this request's own: the cached one is shared, and the headers belong to this answer.
    if (nonce === undefined) return result;
    return { ok: true, state: { ...result.state }, headers: { "DPoP-Nonce": await nonce } };
  }

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
