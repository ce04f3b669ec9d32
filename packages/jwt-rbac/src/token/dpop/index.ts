import type { Logger } from "@agent-platform/common";
import { configError } from "@agent-platform/common/internal";
import { type AuthError, invalidTokenError, REALM } from "../../errors.js";
import type { JwtAlgorithm } from "../../options.js";
import { type HeadersInput, readHeader } from "../read/headers.js";
import { isHmac, isSupportedAlgorithm } from "../verify/algorithms.js";
import type { Runtime } from "../verify/signature-types.js";
import {
  boundAsBearerError,
  inDpopScheme,
  invalidProofError,
  NoncedAuthError,
  useNonceError,
  withDpopChallenge,
} from "./errors.js";
import { NonceSource } from "./nonce.js";
import {
  DEFAULT_DPOP_ALGORITHMS,
  DEFAULT_DPOP_CLOCK_SKEW_SEC,
  DEFAULT_DPOP_MAX_AGE_SEC,
  DEFAULT_REPLAY_MAX,
  type DpopOptions,
  type ReplayStore,
} from "./options.js";
import { ProofVerifier } from "./proof.js";
import { defaultReplayShare, MemoryReplayStore, ReplayShareFullError } from "./replay.js";

/** `dpop` resolved once: every value checked, defaults filled in. */
export interface DpopConfig {
  readonly required: boolean;
  readonly algorithms: readonly JwtAlgorithm[];
  readonly nonce: NonceSource | undefined;
  readonly replay: ReplayStore;
  readonly maxAgeSec: number;
  readonly clockSkewSec: number;
}

function seconds(value: number, name: string, least: number): number {
  if (!Number.isFinite(value) || value < least)
    throw configError("jwt-rbac", `${name} must be a number of at least ${least}`);
  return value;
}

export function resolveDpop(options: DpopOptions | undefined): DpopConfig | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null)
    throw configError("jwt-rbac", "dpop must be an object");
  const algorithms = options.algorithms ?? DEFAULT_DPOP_ALGORITHMS;
  if (!Array.isArray(algorithms) || algorithms.length === 0) {
    throw configError("jwt-rbac", "dpop.algorithms must name at least one algorithm");
  }
  for (const alg of algorithms) {
    // RFC 9449 §4.2: a proof is signed with an asymmetric key the client holds; none and HS* never.
    if (!isSupportedAlgorithm(alg) || isHmac(alg)) {
      throw configError(
        "jwt-rbac",
        `dpop.algorithms: "${alg}" is not an asymmetric algorithm (RS*, PS*, ES*, EdDSA)`,
      );
    }
  }
  const replayMax = options.replayMax ?? DEFAULT_REPLAY_MAX;
  if (!Number.isSafeInteger(replayMax) || replayMax <= 0) {
    throw configError("jwt-rbac", "dpop.replayMax must be a positive integer");
  }
  const replayMaxPerKey = options.replayMaxPerKey ?? defaultReplayShare(replayMax);
  if (!Number.isSafeInteger(replayMaxPerKey) || replayMaxPerKey <= 0) {
    throw configError("jwt-rbac", "dpop.replayMaxPerKey must be a positive integer");
  }
  const replay = options.replay ?? new MemoryReplayStore(replayMax, replayMaxPerKey);
  if (typeof replay.add !== "function")
    throw configError("jwt-rbac", "dpop.replay must have an add(key, expiresAtMs) method");
  return {
    required: options.required ?? false,
    algorithms: [...new Set(algorithms as JwtAlgorithm[])],
    nonce: options.nonce === undefined ? undefined : new NonceSource(options.nonce),
    replay,
    maxAgeSec: seconds(options.maxAgeSec ?? DEFAULT_DPOP_MAX_AGE_SEC, "dpop.maxAgeSec", 1),
    clockSkewSec: seconds(options.clockSkewSec ?? DEFAULT_DPOP_CLOCK_SKEW_SEC, "dpop.clockSkewSec", 0),
  };
}

/** What the gate needs of a request. */
export interface DpopRequest {
  readonly method: string;
  readonly headers: HeadersInput;
  /** The request URL the router routes, mount prefix included (the adapters pass it). */
  readonly url?: string | (() => string | undefined) | undefined;
}

/** A verified token, as far as the gate cares: the key it is bound to, if any. */
export interface BoundEntry {
  readonly jkt: string | undefined;
}

export type GateResult<R> =
  | { readonly ok: true; readonly value: R; readonly nonce: string | undefined }
  | { readonly ok: false; readonly error: AuthError };

// RFC 9449 §7.1 / RFC 6750 §2.1: the credentials are a token68.
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Sender-constrained tokens (RFC 9449) around the token pipeline: reads the `DPoP` scheme, holds a bound
 * token to its proof (method, URL, age, `ath`, key thumbprint, nonce, one use) and refuses the
 * downgrades (a bound token as Bearer; with `required`, any Bearer token). Every refusal on a DPoP
 * request is a `DPoP` challenge, with the current nonce when nonces are on.
 */
export class DpopGate {
  readonly #config: DpopConfig;
  readonly #proofs: ProofVerifier;
  readonly #algs: string;
  readonly #logger: Logger;
  #storeFailing = false;
  #shareWarnedAt = Number.NEGATIVE_INFINITY;

  constructor(config: DpopConfig, runtime: Runtime, logger: Logger) {
    this.#config = config;
    this.#algs = config.algorithms.join(" ");
    this.#logger = logger;
    this.#proofs = new ProofVerifier(
      {
        algorithms: new Set(config.algorithms),
        maxAgeSec: config.maxAgeSec,
        clockSkewSec: config.clockSkewSec,
        realm: REALM,
      },
      runtime,
    );
  }

  /** The token of an `Authorization: DPoP <token>` header, `undefined` for any other scheme, or the refusal. */
  dpopToken(headers: HeadersInput, headerKey: string): string | undefined | AuthError {
    const header = readHeader(headers, headerKey);
    if (header === undefined) return undefined;
    const space = header.indexOf(" ");
    if (space < 0 || header.slice(0, space).toLowerCase() !== "dpop") return undefined;
    const token = header.slice(space + 1).trim();
    return TOKEN68.test(token) ? token : invalidTokenError("malformed", "Invalid token: malformed JWT");
  }

  /** A refusal as this gate answers it: in the DPoP scheme where DPoP is in play, with the current nonce. */
  async refusal(error: AuthError, dpopScheme: boolean, nowMs: number): Promise<AuthError> {
    let answer = error;
    if (dpopScheme || this.#config.required) answer = inDpopScheme(error, this.#algs);
    else if (error.reason === "token_missing") answer = withDpopChallenge(error, REALM, this.#algs);
    const { nonce } = this.#config;
    return nonce === undefined ? answer : new NoncedAuthError(answer, await nonce.current(nowMs));
  }

  /**
   * Whether a verified token may be used as presented: `undefined` (go on), or the refusal. For the DPoP
   * scheme, `jkt` is the token's binding and the request's proof must hold.
   */
  async check(
    request: DpopRequest,
    token: string,
    jkt: string | undefined,
    dpopScheme: boolean,
    nowMs: number,
  ): Promise<AuthError | undefined> {
    if (!dpopScheme) {
      if (jkt !== undefined) {
        return boundAsBearerError();
      }
      if (this.#config.required) {
        return invalidTokenError(
          "invalid_scheme",
          "Invalid token: DPoP is required: present a DPoP-bound token with the DPoP scheme",
        );
      }
      return undefined;
    }
    if (jkt === undefined)
      return invalidTokenError(
        "invalid_scheme",
        "Invalid token: the token is not DPoP-bound; present it as Bearer",
      );
    const url = typeof request.url === "function" ? request.url() : request.url;
    const proof = await this.#proofs.check(readHeader(request.headers, "dpop"), {
      method: request.method,
      url,
      accessToken: token,
      jkt,
      nowMs,
    });
    if ("code" in proof) return proof;
    const { nonce, replay, maxAgeSec, clockSkewSec } = this.#config;
    if (nonce !== undefined && !(await nonce.accepts(proof.nonce, nowMs))) return useNonceError(REALM);
    let fresh: boolean;
    try {
      // Remembered until the proof's `iat` leaves the window: after that its age refuses it anyway.
      fresh = await replay.add(
        `${proof.jkt}:${proof.jti}`,
        (proof.iat + maxAgeSec + clockSkewSec) * 1000 + 1000,
      );
      if (this.#storeFailing) this.#logger.warn("jwt-rbac: DPoP replay store answers again");
      this.#storeFailing = false;
    } catch (error) {
      if (error instanceof ReplayShareFullError) {
        // One client past its share: its proofs are refused, the store is not failing for the others.
        const now = Date.now();
        if (now - this.#shareWarnedAt >= 60_000) {
          this.#shareWarnedAt = now;
          this.#logger.warn(`jwt-rbac: ${error.message}`);
        }
        return invalidProofError("too many proofs with this key within the window, try again later", REALM);
      }
      if (!this.#storeFailing) {
        this.#logger.warn(
          `jwt-rbac: DPoP replay store unavailable (${(error as Error).message}); proofs are refused until it answers`,
        );
      }
      this.#storeFailing = true;
      return invalidProofError("replay store unavailable, try again", REALM);
    }
    return fresh ? undefined : invalidProofError("proof already used (replayed jti)", REALM);
  }

  /** The nonce to offer on success, if nonces are on. */
  offer(nowMs: number): Promise<string> | undefined {
    return this.#config.nonce?.current(nowMs);
  }
}
