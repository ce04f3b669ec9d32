import type { JWTPayload } from "jose";
import { type ResolvedConfig, resolveConfig } from "./config.js";
import { AuthError, isAuthError, withResourceMetadata } from "./errors.js";
import type { JwtRbacOptions } from "./options.js";
import { type RouteAccess, routeAccess } from "./rbac/access.js";
import { Authorizer } from "./rbac/authorize.js";
import { type CanonicalPath, pathReader, relativeTo } from "./rbac/canonical-path.js";
import { compileRoute, RouteTable } from "./rbac/routes.js";
import type { ScopeSet } from "./rbac/scopes.js";
import { type AuthState, anonymousState, NO_IDS } from "./state.js";
import {
  boundAsBearerError,
  DpopGate,
  type HeadersInput,
  isCorsPreflight,
  type RequestOrigins,
  type Runtime,
  requestOrigins,
  resolveToken,
} from "./token/index.js";
import { type VerifiedToken, VerifiedTokens } from "./verified-tokens.js";

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
  readonly tokens: VerifiedTokens;
  readonly authorizer: Authorizer | undefined;
  readonly dpop: DpopGate | undefined;
  readonly origins: RequestOrigins;
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
    tokens: new VerifiedTokens(config, runtime, authorizer !== undefined),
    authorizer,
    dpop: config.dpop === undefined ? undefined : new DpopGate(config.dpop, runtime, config.logger),
    origins: requestOrigins(config.publicOrigin, config.logger),
  };
  const { tokens, dpop } = parts;
  const excluded = excludedPaths(config.excludedRoutePaths, config.caseSensitiveRoutes);
  const anonymous: AuthResult<C> = { ok: true, state: anonymousState(config.authorization) };
  const readPath = pathReader();

  function authenticateNow(request: AuthRequest): AuthResult<C> | Promise<AuthResult<C>> {
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
  { config, authorizer, dpop }: Parts,
  method: string,
  path: CanonicalPath,
  entry: VerifiedToken | AuthError,
): AuthResult<C> {
  if (entry instanceof AuthError) return refuse(config, method, entry);
  // Without `dpop`, a bound token cannot be checked: refused, never taken for a bearer token.
  if (entry.jkt !== undefined && dpop === undefined) return refuse(config, method, boundAsBearerError());
  if (authorizer === undefined) return entry.result as AuthResult<C>;
  const allowed = authorizer.authorize(method, path, entry.held as ScopeSet);
  if (allowed instanceof AuthError) return refuse(config, method, allowed);
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
  const fail = async (error: AuthError): Promise<AuthResult<C>> => ({
    ok: false,
    error: await gate.refusal(error, dpopScheme, nowMs),
  });
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
  if (proofRefused !== undefined) return fail(refused(proofRefused));
  const result = decide<C>(parts, method, path, entry);
  if (!result.ok) return fail(result.error);
  const nonce = gate.offer(nowMs);
  // A state of this request's own: the cached one is shared, and the headers belong to this answer.
  if (nonce === undefined) return result;
  return { ok: true, state: { ...result.state }, headers: { "DPoP-Nonce": await nonce } };
}
