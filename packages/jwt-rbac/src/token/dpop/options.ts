/**
 * Where proofs' `jti`s are remembered, so a proof is accepted once. In-memory (`MemoryReplayStore`) by
 * default; `PostgresReplayStore` for replicas, which must share it.
 */
export interface ReplayStore {
  /**
   * Records `key` until `expiresAtMs` (epoch ms). True when it was not recorded yet (first use), false
   * for a replay. A rejection refuses the proof (fail closed).
   */
  add(key: string, expiresAtMs: number): boolean | Promise<boolean>;
}

/** Server-provided nonces (RFC 9449 §8/§9), derived from a secret and the time: no shared state. */
export interface DpopNonceOptions {
  /** At least 32 bytes, the same on every replica. Default: random per instance (replicas then disagree). */
  secret?: string;
  /** How long a nonce is current, in ms; the previous one is still accepted. Default 300000 (5 min). */
  rotateMs?: number;
}

/** `dpop`: sender-constrained tokens (RFC 9449). */
export interface DpopOptions {
  /**
   * `true`: only DPoP-bound tokens with their proof (a bearer token, bound or not, is refused).
   * `false` (default): plain bearer tokens too, but a `cnf.jkt` token never without its proof.
   */
  required?: boolean;
  /** Accepted proof algorithms (asymmetric only). Default ES256, ES384, ES512, EdDSA, RS256, PS256. */
  algorithms?: readonly string[];
  /** Require server nonces in proofs. Default: none required. */
  nonce?: DpopNonceOptions;
  /** Where `jti`s are remembered. Default: in memory, at most `replayMax` within the proof window. */
  replay?: ReplayStore;
  /** Most `jti`s the default in-memory store holds; beyond it proofs are refused. Default 100000. */
  replayMax?: number;
  /**
   * Most `jti`s the default in-memory store holds for one key thumbprint (one client); beyond it that
   * client's proofs are refused and the others' still accepted. Default a tenth of `replayMax`.
   */
  replayMaxPerKey?: number;
  /** Oldest accepted proof `iat`, in seconds. Default 60. */
  maxAgeSec?: number;
  /** Leeway for a proof's `iat` in the future (and its age), in seconds. Default 5. */
  clockSkewSec?: number;
}

export const DEFAULT_DPOP_ALGORITHMS = ["ES256", "ES384", "ES512", "EdDSA", "RS256", "PS256"] as const;
export const DEFAULT_DPOP_MAX_AGE_SEC = 60;
export const DEFAULT_DPOP_CLOCK_SKEW_SEC = 5;
export const DEFAULT_DPOP_NONCE_ROTATE_MS = 300_000;
export const DEFAULT_REPLAY_MAX = 100_000;
/** Longest accepted proof, in characters (an RSA-4096 key and signature fit in a third of it). */
export const MAX_PROOF_LENGTH = 8192;
/** Longest accepted `jti`. */
export const MAX_JTI_LENGTH = 256;
