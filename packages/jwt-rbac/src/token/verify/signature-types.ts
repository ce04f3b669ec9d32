import type { JwtAlgorithm } from "../../options.js";
import type { Base64UrlCodec } from "./base64url.js";

/** A verification key imported once at construction, bound to one algorithm. */
export interface ImportedKey {
  readonly alg: JwtAlgorithm;
  readonly kid: string | undefined;
  readonly cryptoKey: CryptoKey;
}

/**
 * The one step that differs per runtime: checking a signature. Decoding, key selection and claims
 * checks are shared; only this is swapped (WebCrypto via jose everywhere, node:crypto on Node).
 */
export interface SignatureVerifier<PreparedKey = unknown> {
  readonly name: string;
  /** Called once per key, at construction (or when a remote JWKS yields a new key). */
  prepare(key: ImportedKey): PreparedKey;
  /**
   * Whether `token[signingInputEnd + 1, end)` (canonical base64url, checked by `decodeJws`) signs
   * `token[0, signingInputEnd)`. Each runtime decodes the signature its own way, and only when it needs the bytes.
   */
  verify(
    key: PreparedKey,
    alg: JwtAlgorithm,
    token: string,
    signingInputEnd: number,
  ): boolean | Promise<boolean>;
}

/** What the runtime provides to the core. */
export interface Runtime {
  readonly verifier: SignatureVerifier;
  readonly base64Url: Base64UrlCodec;
  /** Reads and parses a JWKS file synchronously; throws a ConfigError when it cannot. */
  readJwksFile(path: string): unknown;
  /** SHA-256 as lower-case hex (the audit's token id): synchronous with node:crypto, a promise with WebCrypto. */
  readonly sha256Hex: (text: string) => string | Promise<string>;
}
