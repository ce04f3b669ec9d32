import type { JWK } from "jose";

/** How the resource server authenticates to the introspection endpoint (RFC 7662 §2.1). */
export type ClientAuth =
  | {
      readonly method: "client_secret_basic" | "client_secret_post";
      readonly clientId: string;
      readonly clientSecret: string;
    }
  | {
      readonly method: "private_key_jwt";
      readonly clientId: string;
      /** The client's private key (a CryptoKey, or a private JWK). */
      readonly privateKey: CryptoKey | JWK;
      /** Default ES256. */
      readonly alg?: string;
      readonly kid?: string;
      /** The assertion's `aud`. Default: the introspection endpoint URL. */
      readonly audience?: string;
    };

/** `introspection`: opaque tokens (RFC 7662). */
export interface IntrospectionOptions {
  /** The introspection endpoint (https, or http on loopback). */
  url?: string;
  /** An issuer whose OIDC discovery document names `introspection_endpoint` (instead of `url`). */
  discovery?: string;
  clientAuth: ClientAuth;
  /** Which tokens are introspected: `"opaque"` (not a JWS; the default), `"jwt"` too, or both. */
  tokenTypes?: readonly ("opaque" | "jwt")[];
  /** Longest an active answer is trusted, in seconds (never past the token's `exp`). Default 300. */
  cacheMaxSec?: number;
  /** How long an inactive answer is remembered, in seconds. Default 10, at most 300. */
  negativeCacheSec?: number;
  /** Most distinct tokens remembered (answers of both kinds). Default 10000. */
  cacheMax?: number;
  /** Outbound introspections per second, per instance (a burst of as many). Default 20. */
  maxPerSecond?: number;
  /** The status of an answer when the endpoint cannot be asked or fails: 401 (default) or 503. */
  unavailableStatus?: 401 | 503;
}

/** First-party opaque tokens (service-account personal access tokens): their claims, or null when unknown. */
export type TokenVerifierHook = (
  token: string,
) => Record<string, unknown> | null | undefined | Promise<Record<string, unknown> | null | undefined>;

export const DEFAULT_INTROSPECTION = {
  cacheMaxSec: 300,
  negativeCacheSec: 10,
  maxNegativeCacheSec: 300,
  cacheMax: 10_000,
  maxPerSecond: 20,
} as const;
