import { AuthError, invalidTokenError } from "../errors.js";
import type { JwtAlgorithm, JwtRbacLogger } from "../options.js";
import { type ClaimRules, checkClaims } from "./claims.js";
import { decodeJws, type JwsHeader } from "./decode.js";
import type { KeyRing, PreparedKey } from "./keys.js";
import type { SignatureVerifier } from "./signature-types.js";

export interface VerifierConfig extends ClaimRules {
  readonly algorithms: readonly JwtAlgorithm[];
  readonly validate: boolean;
  readonly maxTokenLength: number;
}

export interface Verified {
  readonly payload: Record<string, unknown>;
}

const NO_KEYS: readonly PreparedKey[] = [];

/** The verification pipeline shared by every runtime; only `verifier.verify` differs. */
export class TokenVerifier {
  readonly #config: VerifierConfig;
  readonly #verifier: SignatureVerifier;
  readonly #logger: JwtRbacLogger;
  readonly #allowed: ReadonlySet<string>;
  readonly #remoteKeys = new WeakMap<CryptoKey, unknown>();
  readonly #onKeysChanged: () => void;
  #lastRemoteJwks: unknown;

  /** `onKeysChanged`: the remote JWKS was refetched with different content (so cached tokens must go). */
  constructor(
    config: VerifierConfig,
    verifier: SignatureVerifier,
    logger: JwtRbacLogger,
    onKeysChanged: () => void,
  ) {
    this.#onKeysChanged = onKeysChanged;
    this.#config = config;
    this.#verifier = verifier;
    this.#logger = logger;
    this.#allowed = new Set(config.algorithms);
  }

  /** Decodes and verifies. `nowSeconds` is injected so callers share one clock reading. */
  async verify(token: string, keys: KeyRing, nowSeconds: number): Promise<Verified | AuthError> {
    // Bounded before any decoding: a megabyte of "token" costs one length comparison.
    if (token.length > this.#config.maxTokenLength) {
      return invalidTokenError("token_too_large", "Invalid token: token too large");
    }
    const decoded = decodeJws(token);
    if (decoded === "malformed") return invalidTokenError("malformed", "Invalid token: malformed JWT");
    const { header, payload } = decoded;
    if (header.crit !== undefined) {
      // No JWS extension is understood here, so any critical one must be refused (RFC 7515 §4.1.11).
      return invalidTokenError("unsupported_crit", "Invalid token: unsupported critical header parameter");
    }
    if (!this.#config.validate) return { payload };

    // The header may only name one of the configured algorithms; it never chooses the key type.
    if (!this.#allowed.has(header.alg)) {
      return invalidTokenError("algorithm_not_allowed", "Invalid token: algorithm not allowed");
    }
    const alg = header.alg as JwtAlgorithm;
    const candidates = await this.#candidates(header, alg, keys, token);
    if (candidates instanceof AuthError) return candidates;
    let valid = false;
    for (const candidate of candidates) {
      let result = this.#verifier.verify(
        candidate.key,
        alg,
        token,
        decoded.signingInputEnd,
        decoded.signature,
      );
      if (typeof result !== "boolean") result = await result;
      if (result) {
        valid = true;
        break;
      }
    }
    if (!valid) return invalidTokenError("invalid_signature", "Invalid token: signature verification failed");
    return checkClaims(payload, this.#config, nowSeconds) ?? { payload };
  }

  async #candidates(
    header: JwsHeader,
    alg: JwtAlgorithm,
    keys: KeyRing,
    token: string,
  ): Promise<readonly PreparedKey[] | AuthError> {
    const ordered = keys.ordered.get(alg) ?? NO_KEYS;
    const kid = header.kid;
    if (kid === undefined) {
      const jwks = keys.jwksAll.get(alg) ?? NO_KEYS;
      const all = jwks.length === 0 ? ordered : ordered.length === 0 ? jwks : [...ordered, ...jwks];
      if (all.length > 0 || keys.remote === undefined) return all;
    } else {
      const byKid = keys.byKid.get(alg)?.get(kid) ?? NO_KEYS;
      if (byKid.length > 0) return ordered.length === 0 ? byKid : [...byKid, ...ordered];
      if (keys.remote === undefined) {
        if (ordered.length > 0) return ordered;
        return invalidTokenError("unknown_kid", "Invalid token: no key matches the token's kid");
      }
    }
    const remote = await this.#remoteKey(alg, kid, keys, token);
    if (remote !== undefined) return [remote, ...ordered];
    if (ordered.length > 0) return ordered;
    return kid === undefined
      ? invalidTokenError("key_unavailable", "Invalid token: no key available to verify the token")
      : invalidTokenError("unknown_kid", "Invalid token: no key matches the token's kid");
  }

  async #remoteKey(
    alg: JwtAlgorithm,
    kid: string | undefined,
    keys: KeyRing,
    token: string,
  ): Promise<PreparedKey | undefined> {
    const remote = keys.remote;
    if (remote === undefined) return undefined;
    let cryptoKey: CryptoKey;
    try {
      // Only alg and kid are passed on: no other header member (jwk, jku, x5u, ...) reaches jose.
      const header = kid === undefined ? { alg } : { alg, kid };
      const parts = token.split(".");
      cryptoKey = await remote(header, {
        payload: parts[1] ?? "",
        signature: parts[2] ?? "",
        protected: parts[0] ?? "",
      });
    } catch (error) {
      const name = (error as { code?: string }).code ?? (error as Error).name;
      this.#logger.debug(`jwt-rbac: remote JWKS gave no key (${name})`);
      return undefined;
    }
    const current = remote.jwks();
    if (current !== this.#lastRemoteJwks) {
      if (this.#lastRemoteJwks !== undefined) this.#onKeysChanged();
      this.#lastRemoteJwks = current;
    }
    let prepared = this.#remoteKeys.get(cryptoKey);
    if (prepared === undefined) {
      prepared = this.#verifier.prepare({ alg, kid, cryptoKey });
      this.#remoteKeys.set(cryptoKey, prepared);
    }
    return { alg, kid, key: prepared };
  }
}
