import { AuthError, invalidTokenError } from "../errors.js";
import type { JwtAlgorithm, JwtRbacLogger } from "../options.js";
import type { Base64UrlCodec } from "./base64url.js";
import { type ClaimRules, checkClaims } from "./claims.js";
import { type DecodedJws, decodeJws, type JwsHeader } from "./decode.js";
import type { KeyRing, PreparedKey } from "./keys.js";
import type { Platform, SignatureVerifier } from "./signature-types.js";

export interface VerifierConfig extends ClaimRules {
  readonly algorithms: readonly JwtAlgorithm[];
  readonly validate: boolean;
  readonly maxTokenLength: number;
}

export interface Verified {
  readonly payload: Record<string, unknown>;
}

export type VerifyResult = Verified | AuthError;

const NO_KEYS: readonly PreparedKey[] = [];
/** Marker: the static keys cannot decide, ask the remote JWKS. */
const ASK_REMOTE = Symbol("ask remote JWKS");

const signatureFailure = () =>
  invalidTokenError("invalid_signature", "Invalid token: signature verification failed");

/**
 * The verification pipeline shared by every runtime; only `verifier.verify` differs. Stays synchronous
 * while the verifier is (node:crypto), so an uncached token costs no extra promise hops.
 */
export class TokenVerifier {
  readonly #config: VerifierConfig;
  readonly #verifier: SignatureVerifier;
  readonly #codec: Base64UrlCodec;
  readonly #logger: JwtRbacLogger;
  readonly #allowed: ReadonlySet<string>;
  readonly #remoteKeys = new WeakMap<CryptoKey, unknown>();
  readonly #onKeysChanged: () => void;
  #lastRemoteJwks: unknown;

  /** `onKeysChanged`: the remote JWKS was refetched with different content (so cached tokens must go). */
  constructor(config: VerifierConfig, platform: Platform, logger: JwtRbacLogger, onKeysChanged: () => void) {
    this.#onKeysChanged = onKeysChanged;
    this.#config = config;
    this.#verifier = platform.verifier;
    this.#codec = platform.base64Url;
    this.#logger = logger;
    this.#allowed = new Set(config.algorithms);
  }

  /** Decodes and verifies. `nowSeconds` is injected so callers share one clock reading. */
  verify(token: string, keys: KeyRing, nowSeconds: number): VerifyResult | Promise<VerifyResult> {
    // Bounded before any decoding: a megabyte of "token" costs one length comparison.
    if (token.length > this.#config.maxTokenLength) {
      return invalidTokenError("token_too_large", "Invalid token: token too large");
    }
    const decoded = decodeJws(token, this.#codec);
    if (decoded === "malformed") return invalidTokenError("malformed", "Invalid token: malformed JWT");
    const { header } = decoded;
    if (header.crit !== undefined) {
      // No JWS extension is understood here, so any critical one must be refused (RFC 7515 §4.1.11).
      return invalidTokenError("unsupported_crit", "Invalid token: unsupported critical header parameter");
    }
    if (!this.#config.validate) return decoded;

    // The header may only name one of the configured algorithms; it never chooses the key type.
    if (!this.#allowed.has(header.alg)) {
      return invalidTokenError("algorithm_not_allowed", "Invalid token: algorithm not allowed");
    }
    const alg = header.alg as JwtAlgorithm;
    const candidates = this.#candidates(header, alg, keys);
    if (candidates instanceof AuthError) return candidates;
    if (candidates === ASK_REMOTE) return this.#verifyWithRemote(decoded, alg, keys, token, nowSeconds);
    return this.#verifyWith(candidates, 0, decoded, alg, token, nowSeconds);
  }

  #verifyWith(
    candidates: readonly PreparedKey[],
    from: number,
    decoded: DecodedJws,
    alg: JwtAlgorithm,
    token: string,
    nowSeconds: number,
  ): VerifyResult | Promise<VerifyResult> {
    for (let i = from; i < candidates.length; i++) {
      const result = this.#verifier.verify(
        (candidates[i] as PreparedKey).key,
        alg,
        token,
        decoded.signingInputEnd,
        decoded.signature,
      );
      if (result === true) return checkClaims(decoded.payload, this.#config, nowSeconds) ?? decoded;
      if (result !== false) {
        return result.then((valid) =>
          valid
            ? (checkClaims(decoded.payload, this.#config, nowSeconds) ?? decoded)
            : this.#verifyWith(candidates, i + 1, decoded, alg, token, nowSeconds),
        );
      }
    }
    return signatureFailure();
  }

  #candidates(
    header: JwsHeader,
    alg: JwtAlgorithm,
    keys: KeyRing,
  ): readonly PreparedKey[] | AuthError | typeof ASK_REMOTE {
    const ordered = keys.ordered.get(alg) ?? NO_KEYS;
    const kid = header.kid;
    if (kid === undefined) {
      const jwks = keys.jwksAll.get(alg) ?? NO_KEYS;
      const all = jwks.length === 0 ? ordered : ordered.length === 0 ? jwks : [...ordered, ...jwks];
      return all.length > 0 || keys.remote === undefined ? all : ASK_REMOTE;
    }
    const byKid = keys.byKid.get(alg)?.get(kid) ?? NO_KEYS;
    if (byKid.length > 0) return ordered.length === 0 ? byKid : [...byKid, ...ordered];
    if (keys.remote !== undefined) return ASK_REMOTE;
    if (ordered.length > 0) return ordered;
    return invalidTokenError("unknown_kid", "Invalid token: no key matches the token's kid");
  }

  async #verifyWithRemote(
    decoded: DecodedJws,
    alg: JwtAlgorithm,
    keys: KeyRing,
    token: string,
    nowSeconds: number,
  ): Promise<VerifyResult> {
    const ordered = keys.ordered.get(alg) ?? NO_KEYS;
    const remote = await this.#remoteKey(alg, decoded.header.kid, keys, token);
    if (remote === undefined && ordered.length === 0) {
      return decoded.header.kid === undefined
        ? invalidTokenError("key_unavailable", "Invalid token: no key available to verify the token")
        : invalidTokenError("unknown_kid", "Invalid token: no key matches the token's kid");
    }
    const candidates = remote === undefined ? ordered : [remote, ...ordered];
    return this.#verifyWith(candidates, 0, decoded, alg, token, nowSeconds);
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
      const [protectedHeader = "", payload = "", signature = ""] = token.split(".");
      cryptoKey = await remote(header, { payload, signature, protected: protectedHeader });
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
