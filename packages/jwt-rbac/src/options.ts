import type { JSONWebKeySet } from "jose";

/** Where the token is read from. */
export const TokenSource = {
  HEADER: "header",
  COOKIE: "cookie",
  BOTH: "both",
} as const;
export type TokenSource = (typeof TokenSource)[keyof typeof TokenSource];

/** The JWS algorithms a token may be verified with. `none` is never one of them. */
export const SUPPORTED_ALGORITHMS = [
  "HS256",
  "HS384",
  "HS512",
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;
export type JwtAlgorithm = (typeof SUPPORTED_ALGORITHMS)[number];

export interface JwtRbacLogger {
  warn(message: string): void;
  debug(message: string): void;
}

export interface CacheOptions {
  /** Most tokens kept. */
  max: number;
  /** Longest time a verified token is trusted without re-verification, in milliseconds. */
  ttlMs: number;
}

export interface JwtRbacOptions {
  /** Public keys (PEM SPKI, PEM certificate, JWK as JSON) or, for HS*, shared secrets. Tried in order. */
  verificationKeys?: readonly string[];
  /** Path of a static JWKS file, read once at construction (Node only). */
  jwksFile?: string;
  /** A JWKS given inline. */
  jwks?: JSONWebKeySet;
  /** A remote JWKS (https, or http on loopback). */
  jwksUrl?: string;
  /** @deprecated Use `verificationKeys`. Appended to them. */
  secretKey?: string;
  /** The one accepted algorithm. Default `"RS256"`. */
  algorithm?: string;
  /** Several accepted algorithms (overrides `algorithm`). */
  algorithms?: readonly string[];
  /** `false` decodes without verifying signature, time claims, audience or issuer. Local development only. */
  validate?: boolean;
  /** RBAC scope checks. Default: on when `scopeMappings` is given. */
  authorization?: boolean;
  tokenSource?: TokenSource;
  /**
   * Origins (`https://app.example.com`) whose cookie-authenticated unsafe requests are accepted
   * without `Sec-Fetch-Site: same-origin`. Default: the request's own origin only.
   */
  allowedOrigins?: readonly string[];
  tokenHeaderKey?: string;
  cookieName?: string;
  scopesClaim?: string;
  userIdClaim?: string;
  sessionIdClaim?: string;
  audienceClaim?: string;
  /** Expected audience. Default: `platformId`. */
  audience?: string | readonly string[];
  /** The platform instance id; the default expected audience. */
  platformId?: string;
  verifyAudience?: boolean;
  /** Expected `iss`. */
  issuer?: string | readonly string[];
  /** Leeway for `exp`, `nbf` and `iat`, in seconds. Default 10. */
  clockTolerance?: number;
  dependenciesClaims?: readonly string[];
  sessionStateClaims?: readonly string[];
  /** `"<METHOD> <path>"` -> required scopes; additive to `DEFAULT_SCOPE_MAPPINGS`. */
  scopeMappings?: Readonly<Record<string, readonly string[]>>;
  excludedRoutePaths?: readonly string[];
  adminScope?: string;
  unmappedRoutes?: "allow" | "deny";
  cache?: Partial<CacheOptions> | false;
  logger?: JwtRbacLogger;
  /**
   * Whether route literals match case-sensitively. Default `true`, except in the Express adapter, where
   * it defaults to `false` as Express routing does, so `/AGENTS` meets the `/agents` mappings.
   */
  caseSensitiveRoutes?: boolean;
  /** Longest accepted token, in characters; longer ones are refused before any decoding. Default 16384. */
  maxTokenLength?: number;
}

export const DEFAULT_CACHE: CacheOptions = { max: 1000, ttlMs: 60_000 };
export const DEFAULT_MAX_TOKEN_LENGTH = 16_384;
export const DEFAULT_CLOCK_TOLERANCE = 10;

export const NOOP_LOGGER: JwtRbacLogger = {
  warn() {},
  debug() {},
};
