import { AuthError, invalidTokenError } from "../../errors.js";
import type { JwtAlgorithm } from "../../options.js";
import type { PreparedKey } from "../keys/keys.js";
import { selectIssuer, type Trust } from "../keys/trust.js";
import type { TrustedIssuer } from "../keys/trusted-issuer.js";
import type { Base64UrlCodec } from "./base64url.js";
import { checkClaims } from "./claims.js";
import { type DecodedJws, decodeJws } from "./decode.js";
import type { Runtime, SignatureVerifier } from "./signature-types.js";
import { typMatcher, wrongTypError } from "./typ.js";

export interface VerifierConfig {
  /** Every algorithm some issuer accepts. */
  readonly algorithms: readonly JwtAlgorithm[];
  readonly validate: boolean;
  readonly maxTokenLength: number;
  readonly requireTyp: string | undefined;
}

export interface Verified {
  readonly payload: Record<string, unknown>;
}

export type VerifyResult = Verified | AuthError;

const NO_KEYS: readonly PreparedKey[] = [];

const signatureFailure = () =>
  invalidTokenError("invalid_signature", "Invalid token: signature verification failed");
const keyUnavailable = () =>
  invalidTokenError("key_unavailable", "Invalid token: no key available to verify the token");
const unknownKid = () => invalidTokenError("unknown_kid", "Invalid token: no key matches the token's kid");

/** The keys of up to three lists in order; a lone non-empty list as it is (the usual case: no array made). */
function concat(
  a: readonly PreparedKey[] | undefined,
  b: readonly PreparedKey[] | undefined,
  c?: readonly PreparedKey[] | undefined,
): readonly PreparedKey[] {
  const hasA = a !== undefined && a.length > 0;
  const hasB = b !== undefined && b.length > 0;
  const hasC = c !== undefined && c.length > 0;
  if (!hasB && !hasC) return hasA ? a : NO_KEYS;
  if (!hasA && !hasC) return b as readonly PreparedKey[];
  if (!hasA && !hasB) return c as readonly PreparedKey[];
  return [...(a ?? NO_KEYS), ...(b ?? NO_KEYS), ...(c ?? NO_KEYS)];
}

/**
 * The verification pipeline shared by every runtime; only `verifier.verify` differs. Stays synchronous
 * while the verifier is (node:crypto) and no key set has to be fetched, so an uncached token costs no
 * extra promise hops, with remote keys as with local ones.
 */
export class TokenVerifier {
  readonly #config: VerifierConfig;
  readonly #verifier: SignatureVerifier;
  readonly #codec: Base64UrlCodec;
  readonly #allowed: ReadonlySet<string>;
  readonly #typ: ((typ: unknown) => boolean) | undefined;

  constructor(config: VerifierConfig, runtime: Runtime) {
    this.#config = config;
    this.#verifier = runtime.verifier;
    this.#codec = runtime.base64Url;
    this.#allowed = new Set(config.algorithms);
    this.#typ = config.requireTyp === undefined ? undefined : typMatcher(config.requireTyp);
  }

  /**
   * The header rules of every JWT, for one that is verified elsewhere (sent to introspection): with
   * `requireTyp`, a JWS whose header cannot be read, names a critical extension or carries another `typ`
   * is refused before it is sent anywhere. `undefined` when the header passes, or without `requireTyp`.
   */
  headerRefusal(token: string): AuthError | undefined {
    if (this.#typ === undefined || !this.#config.validate) return undefined;
    if (token.length > this.#config.maxTokenLength) {
      return invalidTokenError("token_too_large", "Invalid token: token too large");
    }
    const decoded = decodeJws(token, this.#codec);
    if (decoded === "malformed") return invalidTokenError("malformed", "Invalid token: malformed JWT");
    if (decoded.header.crit !== undefined) {
      return invalidTokenError("unsupported_crit", "Invalid token: unsupported critical header parameter");
    }
    return this.#typ(decoded.header.typ) ? undefined : wrongTypError();
  }

  /** Decodes and verifies. `nowMs` is injected so callers share one clock reading. */
  verify(token: string, trust: Trust, nowMs: number): VerifyResult | Promise<VerifyResult> {
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
    // Before any key is looked for: an ID token presented as an access token is refused for its type.
    if (this.#typ !== undefined && !this.#typ(header.typ)) return wrongTypError();

    // The header may only name one of the configured algorithms; it never chooses the key type.
    if (!this.#allowed.has(header.alg)) {
      return invalidTokenError("algorithm_not_allowed", "Invalid token: algorithm not allowed");
    }
    // The unverified `iss` only picks whose keys to try (and is verified as a claim afterwards): a
    // token from an issuer nobody trusts is refused here, before it can make anything be fetched.
    const issuer = selectIssuer(trust, decoded.payload.iss) ?? trust.tenants?.get(decoded.payload.iss, nowMs);
    if (issuer instanceof Promise) {
      return issuer.then((made) => this.#verifyForIssuer(decoded, made, token, nowMs));
    }
    return this.#verifyForIssuer(decoded, issuer, token, nowMs);
  }

  #verifyForIssuer(
    decoded: DecodedJws,
    issuer: TrustedIssuer | undefined,
    token: string,
    nowMs: number,
  ): VerifyResult | Promise<VerifyResult> {
    const { header } = decoded;
    if (issuer === undefined) return invalidTokenError("invalid_issuer", "Invalid token: unexpected issuer");
    if (!issuer.allowed.has(header.alg)) {
      return invalidTokenError("algorithm_not_allowed", "Invalid token: algorithm not allowed");
    }
    const alg = header.alg as JwtAlgorithm;
    const remote = issuer.remote;
    if (remote !== undefined) {
      if (this.#remoteMayHelp(decoded, alg, issuer)) {
        // At most one fetch in flight and one per cooldown: within the cooldown, answer with what is here.
        const pending = remote.refresh(nowMs);
        if (pending !== undefined)
          return pending.then(() => this.#verifyWithKeys(decoded, alg, issuer, token, nowMs));
      } else if (remote.stale(nowMs)) {
        // The token's key is here; the set is refetched in the background, so no request waits for it.
        void remote.refresh(nowMs);
      }
    }
    return this.#verifyWithKeys(decoded, alg, issuer, token, nowMs);
  }

  /** True when the token's key could only come from a (re)fetch: no remote keys yet, or its `kid` is unknown. */
  #remoteMayHelp(decoded: DecodedJws, alg: JwtAlgorithm, issuer: TrustedIssuer): boolean {
    const fetched = issuer.remote?.keys;
    if (fetched === undefined) return true;
    const kid = decoded.header.kid;
    return (
      kid !== undefined &&
      fetched.byKid.get(alg)?.get(kid) === undefined &&
      issuer.keys.jwks.byKid.get(alg)?.get(kid) === undefined
    );
  }

  #verifyWithKeys(
    decoded: DecodedJws,
    alg: JwtAlgorithm,
    issuer: TrustedIssuer,
    token: string,
    nowMs: number,
  ): VerifyResult | Promise<VerifyResult> {
    const candidates = this.#candidates(decoded, alg, issuer);
    if (candidates instanceof AuthError) return candidates;
    return this.#verifyWith(candidates, 0, decoded, alg, issuer, token, nowMs / 1000);
  }

  /** Every key that may have signed the token, without fetching anything. */
  #candidates(
    decoded: DecodedJws,
    alg: JwtAlgorithm,
    issuer: TrustedIssuer,
  ): readonly PreparedKey[] | AuthError {
    const ordered = issuer.keys.ordered.get(alg);
    const fetched = issuer.remote?.keys;
    const kid = decoded.header.kid;
    if (kid === undefined) {
      // No kid (common during a rotation overlap): every key of the algorithm is tried, local and fetched.
      const all = concat(ordered, issuer.keys.jwks.all.get(alg), fetched?.all.get(alg));
      if (all.length > 0) return all;
      return issuer.remote !== undefined && fetched === undefined ? keyUnavailable() : signatureFailure();
    }
    const byKid = concat(issuer.keys.jwks.byKid.get(alg)?.get(kid), fetched?.byKid.get(alg)?.get(kid));
    if (byKid.length > 0) return concat(byKid, ordered);
    if (ordered !== undefined && ordered.length > 0) return ordered;
    return issuer.remote !== undefined && fetched === undefined ? keyUnavailable() : unknownKid();
  }

  #verifyWith(
    candidates: readonly PreparedKey[],
    from: number,
    decoded: DecodedJws,
    alg: JwtAlgorithm,
    issuer: TrustedIssuer,
    token: string,
    nowSeconds: number,
  ): VerifyResult | Promise<VerifyResult> {
    for (let i = from; i < candidates.length; i++) {
      const result = this.#verifier.verify(
        (candidates[i] as PreparedKey).key,
        alg,
        token,
        decoded.signingInputEnd,
      );
      if (result === true) {
        issuer.onVerified?.();
        return checkClaims(decoded.payload, issuer.rules, nowSeconds) ?? decoded;
      }
      if (result !== false) {
        return result.then((valid) => {
          if (!valid) return this.#verifyWith(candidates, i + 1, decoded, alg, issuer, token, nowSeconds);
          issuer.onVerified?.();
          return checkClaims(decoded.payload, issuer.rules, nowSeconds) ?? decoded;
        });
      }
    }
    return signatureFailure();
  }
}
