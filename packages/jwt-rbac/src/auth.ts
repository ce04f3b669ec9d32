import type { JWTPayload } from "jose";
import { resolveConfig } from "./config.js";
import type { AuthError } from "./errors.js";
import type { JwtRbacOptions } from "./options.js";
import { Authorizer } from "./rbac/authorize.js";
import { compileRoute, RouteTable } from "./rbac/routes.js";
import { type ScopeSet, scopeSet } from "./rbac/scopes.js";
import { type AuthState, anonymousState, type Identity, identityFrom, NO_IDS } from "./state.js";
import { TokenCache } from "./token/cache.js";
import { type KeyRing, loadKeyRing } from "./token/keys.js";
import { type HeadersInput, resolveToken } from "./token/resolve.js";
import type { Platform } from "./token/signature-types.js";
import { TokenVerifier } from "./token/verify.js";

/** The framework-free view of a request. */
export interface AuthRequest {
  readonly method: string;
  /** Path, with or without a query string. */
  readonly path: string;
  readonly headers: HeadersInput;
  /** Parsed cookies, if the framework has them; otherwise the `Cookie` header is read. */
  readonly cookies?: Readonly<Record<string, string | undefined>> | undefined;
}

export type AuthResult<C extends object = JWTPayload> =
  | { readonly ok: true; readonly state: AuthState<C> }
  | { readonly ok: false; readonly error: AuthError };

export interface JwtAuth<C extends object = JWTPayload> {
  /** Never rejects for a bad request; rejects only when the keys could not be imported (see `ready`). */
  authenticate(request: AuthRequest): Promise<AuthResult<C>>;
  /** Settles when every key is imported; rejects with a JwtRbacConfigError when one cannot be. */
  readonly ready: Promise<void>;
  /** Drops every cached verified token. */
  clearCache(): void;
  /** `"node:crypto"` or `"webcrypto"`: which signature verifier this build uses. */
  readonly verifier: string;
}

interface CachedToken {
  readonly identity: Identity;
  readonly held: ScopeSet;
}

/** `createJwtAuth` on a given platform (the public entry points bind the runtime's own). */
export function createJwtAuthOn<C extends object = JWTPayload>(
  platform: Platform,
  options: JwtRbacOptions,
): JwtAuth<C> {
  const config = resolveConfig(options, platform);
  const { logger } = config;
  const cache =
    config.cache === false ? undefined : new TokenCache<CachedToken>(config.cache.max, config.cache.ttlMs);
  const verifier = new TokenVerifier(config, platform.verifier, logger, () => cache?.clear());
  const excluded = new RouteTable(config.excludedRoutePaths.map((path) => compileRoute(path, true, false)));
  const authorizer = config.authorization ? new Authorizer(config) : undefined;
  const anonymous: AuthResult<C> = { ok: true, state: anonymousState(config.authorization) };
  const toleranceMs = config.clockTolerance * 1000;

  let keys: KeyRing | undefined;
  const loading = loadKeyRing(config, platform.verifier, logger);
  const ready = loading.then((ring) => {
    keys = ring;
  });

  async function verifyToken(token: string, nowMs: number): Promise<CachedToken | AuthError> {
    const ring = keys ?? (await loading);
    const verified = await verifier.verify(token, ring, nowMs / 1000);
    if (!("payload" in verified)) return verified;
    const identity = identityFrom(token, verified.payload, config);
    const entry: CachedToken = { identity, held: scopeSet(identity.scopes, config.adminScope) };
    if (cache !== undefined) {
      const exp = verified.payload.exp;
      cache.set(
        token,
        entry,
        nowMs,
        config.validate && typeof exp === "number" ? exp * 1000 + toleranceMs : undefined,
      );
    }
    return entry;
  }

  return {
    ready,
    verifier: platform.verifier.name,
    clearCache: () => cache?.clear(),
    async authenticate(request: AuthRequest): Promise<AuthResult<C>> {
      const method = request.method.toUpperCase();
      // CORS preflights carry no credentials; routers answer them before any handler.
      if (method === "OPTIONS") return anonymous;
      if (excluded.match(method, request.path) !== undefined) return anonymous;

      const token = resolveToken(config, request.headers, request.cookies);
      if (typeof token !== "string") return { ok: false, error: token };

      const nowMs = Date.now();
      const entry = cache?.get(token, nowMs) ?? (await verifyToken(token, nowMs));
      if (!("identity" in entry)) {
        logger.debug(`jwt-rbac: ${method} refused: ${entry.reason}`);
        return { ok: false, error: entry };
      }

      let accessibleResourceIds = NO_IDS;
      if (authorizer !== undefined) {
        const allowed = authorizer.authorize(method, request.path, entry.held);
        if (!(allowed instanceof Set)) {
          logger.debug(`jwt-rbac: ${method} refused: ${(allowed as AuthError).reason}`);
          return { ok: false, error: allowed as AuthError };
        }
        accessibleResourceIds = allowed;
      }
      const state = { ...entry.identity, authorizationEnabled: config.authorization, accessibleResourceIds };
      return { ok: true, state: state as unknown as AuthState<C> };
    },
  };
}
