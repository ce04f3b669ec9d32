import type { ResolvedConfig } from "./config.js";
import { AuthError } from "./errors.js";
import { type ScopeSet, scopeSet } from "./rbac/scopes.js";
import { type AuthState, authenticatedState } from "./state.js";
import {
  kindOf,
  loadTrust,
  type OpaqueOutcome,
  OpaqueTokens,
  type Runtime,
  TokenCache,
  TokenVerifier,
  type Trust,
  type VerifyResult,
} from "./token/index.js";

/** What a verified token yields, built once and then shared by every request carrying that token. */
export interface VerifiedToken {
  /** `{ ok: true, state }` with no listing ids: the answer for most routes, reused as is. */
  readonly result: { readonly ok: true; readonly state: AuthState };
  /** Parsed scopes, only when authorization is on. */
  readonly held: ScopeSet | undefined;
  /** The key the token is bound to (`cnf.jkt`); `""` for a binding this package cannot check. */
  readonly jkt: string | undefined;
}

/**
 * A token to its verified state: from the cache, else verified (a JWT against the trusted keys, an opaque token by
 * introspection or `tokenVerifier`) and cached until its expiry. The keys load once, from construction on.
 */
export class VerifiedTokens {
  /** Settles when every key is imported; rejects with a ConfigError when one cannot be. */
  readonly ready: Promise<void>;
  readonly #config: ResolvedConfig;
  readonly #withScopes: boolean;
  readonly #cache: TokenCache<VerifiedToken> | undefined;
  readonly #verifier: TokenVerifier;
  readonly #opaque: OpaqueTokens | undefined;
  readonly #toleranceMs: number;
  readonly #loading: Promise<Trust>;
  #trust: Trust | undefined;

  constructor(config: ResolvedConfig, runtime: Runtime, withScopes: boolean) {
    const { cache, logger } = config;
    this.#config = config;
    this.#withScopes = withScopes;
    this.#cache = cache === false ? undefined : new TokenCache<VerifiedToken>(cache.max, cache.ttlMs);
    this.#verifier = new TokenVerifier(config, runtime);
    this.#opaque = config.opaque === undefined ? undefined : new OpaqueTokens(config.opaque, logger);
    this.#toleranceMs = config.clockTolerance * 1000;
    // A remote key set whose content changed: tokens verified with the old keys must be verified again.
    this.#loading = loadTrust(config, runtime.verifier, logger, () => this.#cache?.clear());
    this.ready = this.#loading.then((loaded) => {
      this.#trust = loaded;
    });
  }

  /** The cached entry, else the verification: synchronous whenever the keys are loaded and the verifier is. */
  get(token: string, nowMs: number): VerifiedToken | AuthError | Promise<VerifiedToken | AuthError> {
    return this.#cache?.get(token, nowMs) ?? this.#verify(token, nowMs);
  }

  /** The cached entry only, never a verification (what a span reports as a cache hit). */
  cached(token: string, nowMs: number): VerifiedToken | undefined {
    return this.#cache?.get(token, nowMs);
  }

  /** Drops every cached verified token. */
  clear(): void {
    this.#cache?.clear();
  }

  #verify(token: string, nowMs: number): VerifiedToken | AuthError | Promise<VerifiedToken | AuthError> {
    const opaque = this.#opaque;
    if (opaque?.handles(token)) {
      // A JWT sent to introspection is held to the same header rules (requireTyp) as one verified here.
      const refused = kindOf(token) === "jwt" ? this.#verifier.headerRefusal(token) : undefined;
      if (refused !== undefined) return refused;
      const outcome = opaque.verify(token, nowMs);
      return outcome instanceof Promise
        ? outcome.then((settled) => this.#settleOpaque(token, settled, nowMs))
        : this.#settleOpaque(token, outcome, nowMs);
    }
    const trust = this.#trust;
    if (trust === undefined) {
      return this.#loading.then(async (loaded) =>
        this.#settle(token, await this.#verifier.verify(token, loaded, nowMs), nowMs),
      );
    }
    const verified = this.#verifier.verify(token, trust, nowMs);
    return verified instanceof Promise
      ? verified.then((result) => this.#settle(token, result, nowMs))
      : this.#settle(token, verified, nowMs);
  }

  #settle(token: string, verified: VerifyResult, nowMs: number): VerifiedToken | AuthError {
    return verified instanceof AuthError ? verified : this.#entry(token, verified.payload, nowMs);
  }

  #settleOpaque(token: string, outcome: OpaqueOutcome, nowMs: number): VerifiedToken | AuthError {
    return outcome instanceof AuthError
      ? outcome
      : this.#entry(token, outcome.claims, nowMs, outcome.notAfterMs);
  }

  #entry(token: string, payload: Record<string, unknown>, nowMs: number, notAfterMs?: number): VerifiedToken {
    const config = this.#config;
    // Shared by every request with this token: typed readonly, and never mutated here.
    const state = authenticatedState(token, payload, config, config.authorization) as AuthState;
    const entry: VerifiedToken = {
      result: { ok: true, state },
      held: this.#withScopes ? scopeSet(state.scopes, config.adminScope, config.scopeAliases) : undefined,
      jkt: state.authenticated ? state.confirmation?.jkt : undefined,
    };
    if (this.#cache !== undefined) {
      const exp = payload.exp;
      const notAfter =
        notAfterMs ??
        (config.validate && typeof exp === "number" ? exp * 1000 + this.#toleranceMs : undefined);
      this.#cache.set(token, entry, nowMs, notAfter);
    }
    return entry;
  }
}
