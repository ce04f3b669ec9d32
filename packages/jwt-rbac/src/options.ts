import type { LoggerOption } from "@agent-platform/common";
import type { JSONWebKeySet } from "jose";
import type { AuditMode, DecisionListener } from "./audit/decision.js";
import type { RbacPolicy } from "./rbac/policy.js";
import type { DpopOptions } from "./token/dpop/options.js";
import type { IntrospectionOptions, TokenVerifierHook } from "./token/introspection/options.js";
import type { PublicOrigin } from "./token/read/public-origin.js";
import type { IssuerOptions, IssuerResolver } from "./token/tenants/options.js";

export type { IssuerOptions } from "./token/tenants/options.js";

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
/** A JWS algorithm this package verifies (`SUPPORTED_ALGORITHMS`). */
export type JwtAlgorithm = (typeof SUPPORTED_ALGORITHMS)[number];

/** The verified-token cache: at most `max` tokens, each kept at most `ttlMs` (and never past its `exp`). */
export interface CacheOptions {
  /** Most tokens kept. */
  max: number;
  /** Longest time a verified token is trusted without re-verification, in milliseconds. */
  ttlMs: number;
}

/** Fetch discipline of remote key sets (`jwksUrl`, `discovery`). */
export interface RemoteKeysOptions {
  /** Whole exchange, in milliseconds. Default 5000. */
  timeoutMs?: number;
  /** Largest accepted JWKS or discovery document, in bytes, enforced while reading. Default 1 MiB. */
  maxBytes?: number;
  /** Least time between two fetches of a key set (failed ones included), in milliseconds. Default 30000. */
  cooldownMs?: number;
  /** How long a key set stays fresh when its response has no `Cache-Control: max-age`. Default 10 min. */
  maxAgeMs?: number;
}

/** Options of `createJwtAuth` and every adapter; each is described in the README's Options table and docs/options.md. */
export interface JwtRbacOptions {
  /** Public keys (PEM SPKI, PEM certificate, JWK as JSON) or, for HS*, shared secrets. Tried in order. */
  verificationKeys?: readonly string[];
  /** Path of a static JWKS file, read once at construction (Node only). */
  jwksFile?: string;
  /** A JWKS given inline. */
  jwks?: JSONWebKeySet;
  /** A remote JWKS (https, or http on loopback). */
  jwksUrl?: string;
  /** `true`: find the JWKS through the OIDC discovery document of `issuer` (one string). */
  discovery?: boolean;
  /** Several trusted issuers, each with its own keys; a token's `iss` picks one (instead of the top-level key options and `issuer`). */
  issuers?: readonly IssuerOptions[] | IssuerResolver;
  /** Most issuers created from templates or the resolver kept at once (LRU). Default 100. */
  maxTenantIssuers?: number;
  remoteKeys?: RemoteKeysOptions;
  /** @deprecated Use `verificationKeys`. Appended to them. */
  secretKey?: string;
  /** The one accepted algorithm. Default `"RS256"`. */
  algorithm?: string;
  /** Several accepted algorithms (overrides `algorithm`). */
  algorithms?: readonly string[];
  /** `false` decodes without verifying signature, time claims, audience or issuer. Local development only. */
  validate?: boolean;
  /** RBAC scope checks. Default: on when `scopeMappings` or a `policy` with a table is given. */
  authorization?: boolean;
  tokenSource?: TokenSource;
  /**
   * Origins (`https://app.example.com`) whose cookie-authenticated unsafe requests are accepted
   * without `Sec-Fetch-Site: same-origin`. Default: the request's own origin only.
   */
  allowedOrigins?: readonly string[];
  /**
   * The origin clients address this server by (`https://api.example.com`), which a DPoP proof's `htu` names with
   * the routed path, and the request's own origin for the cross-site check. Set it behind a proxy (TLS
   * terminated, another port or host). Or a function answering it per request, for a trusted proxy serving
   * several hosts (`undefined`: the proof is refused). Default: the scheme the request arrived on and its
   * `Host` header, which must be one valid host; the authority of an absolute-form request target is never used.
   */
  publicOrigin?: PublicOrigin;
  tokenHeaderKey?: string;
  cookieName?: string;
  scopesClaim?: string;
  userIdClaim?: string;
  sessionIdClaim?: string;
  audienceClaim?: string;
  /** Expected audience; always checked when given (RFC 8707: a resource refuses tokens not issued for it). */
  audience?: string | readonly string[];
  /** The platform instance id; the expected audience when `verifyAudience` is on and no `audience` is given. */
  platformId?: string;
  /** Check the audience against `platformId` (an explicit `audience` is checked anyway). */
  verifyAudience?: boolean;
  /** Expected `iss`. */
  issuer?: string | readonly string[];
  /** Leeway for `exp`, `nbf` and `iat`, in seconds. Default 10. */
  clockTolerance?: number;
  dependenciesClaims?: readonly string[];
  sessionStateClaims?: readonly string[];
  /**
   * The route table, public paths, listing routes, admin scope and legacy scope names the options below
   * refine. Default `PLATFORM_POLICY` (the agent platform's); a generic app passes its own.
   */
  policy?: RbacPolicy;
  /** `false`: a held legacy scope (`system:read`) no longer counts as its current name (`config:read`). Default `true`. */
  legacyScopeAliases?: boolean;
  /** `"<METHOD> <path>"` -> required scopes; additive to the policy's table unless `defaultScopeMappings` is false. */
  scopeMappings?: Readonly<Record<string, readonly string[]>>;
  /** `false`: start from an empty route table (a generic app), so only `scopeMappings` apply. Default `true`. */
  defaultScopeMappings?: boolean;
  excludedRoutePaths?: readonly string[];
  adminScope?: string;
  unmappedRoutes?: "allow" | "deny";
  cache?: Partial<CacheOptions> | false;
  /**
   * Where warnings (skipped keys, key sets unavailable) and refusals (debug) go: pino, `console`, any logger
   * with debug, info, warn and error; `child` is used when present. Default: silent.
   */
  logger?: LoggerOption;
  /**
   * Whether route literals match case-sensitively. Default `true`, except in the Express adapter, where
   * it defaults to `false` as Express routing does, so `/AGENTS` meets the `/agents` mappings.
   */
  caseSensitiveRoutes?: boolean;
  /** Longest accepted token, in characters; longer ones are refused before any decoding. Default 16384. */
  maxTokenLength?: number;
  /** URL of this resource's RFC 9728 metadata; added as `resource_metadata` to every 401/403 challenge. */
  resourceMetadata?: string;
  /**
   * The only accepted JWS `typ` (RFC 9068 access tokens: `"at+jwt"`), compared as RFC 8725 §3.11 says;
   * any other, or none, is `invalid_token`. Default: `typ` is not read.
   */
  requireTyp?: string;
  /** Sender-constrained tokens (RFC 9449); see docs/dpop.md. */
  dpop?: DpopOptions;
  /** Opaque tokens by RFC 7662 introspection; see docs/opaque-tokens.md. */
  introspection?: IntrospectionOptions;
  /** First-party opaque tokens (service-account tokens): `(token) => claims | null`, cached like introspection. */
  tokenVerifier?: TokenVerifierHook;
  /**
   * Called with every refusal (and, with `audit: "all"`, every authenticated request passed on) as an
   * `AccessDecision`, after the answer is handed back; never awaited, and what it throws is logged. See
   * docs/audit.md.
   */
  onDecision?: DecisionListener;
  /** Which decisions reach `onDecision`: `"denied"` (default) or `"all"`. */
  audit?: AuditMode;
}

export const DEFAULT_CACHE: CacheOptions = { max: 1000, ttlMs: 60_000 };
export const DEFAULT_REMOTE_KEYS: Required<RemoteKeysOptions> = {
  timeoutMs: 5_000,
  maxBytes: 1024 * 1024,
  cooldownMs: 30_000,
  maxAgeMs: 600_000,
};
/** The longest a remote key set is trusted without a refetch, whatever its `Cache-Control` says. */
export const MAX_REMOTE_KEYS_AGE_MS = 24 * 3600_000;
export const DEFAULT_MAX_TOKEN_LENGTH = 16_384;
export const DEFAULT_CLOCK_TOLERANCE = 10;
