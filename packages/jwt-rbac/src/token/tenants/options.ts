import type { JSONWebKeySet } from "jose";

/** One trusted token issuer, with its own keys and settings (`issuers`). */
export interface IssuerOptions {
  /** Compared exactly, as a string, with the token's `iss`. */
  issuer: string;
  /** This issuer's remote JWKS (https, or http on loopback). */
  jwksUrl?: string;
  /** `true`: find the JWKS through `{issuer}/.well-known/openid-configuration` (read once, issuer checked). */
  discovery?: boolean;
  verificationKeys?: readonly string[];
  jwks?: JSONWebKeySet;
  /** Expected audience for this issuer's tokens. Default: the top-level `audience`. */
  audience?: string | readonly string[];
  /** Accepted algorithms for this issuer. Default: the top-level ones. */
  algorithms?: readonly string[];
  /**
   * For a template `issuer` (one `{placeholder}`, as in `https://login.microsoftonline.com/{tenantid}/v2.0`):
   * the tenants trusted, as an allow-list or a validator of the placeholder's value. Required for templates.
   */
  tenants?: readonly string[] | ((tenant: string) => boolean);
}

/** `issuers` as a function: the options of the issuer a token names, or `undefined` when it is not trusted. */
export type IssuerResolver = (iss: string) => IssuerOptions | undefined | Promise<IssuerOptions | undefined>;

/**
 * Most issuers created from templates or the resolver that are kept (least recently used dropped), counted
 * twice: those whose keys verified a token, and as many candidates that have not yet. Default 100.
 */
export const DEFAULT_MAX_TENANT_ISSUERS = 100;
/**
 * New issuers created per second at most, in total: each costs the identity provider its first fetches
 * (discovery document, key set). Past it a new `iss` is refused for now.
 */
export const TENANT_ISSUERS_PER_SECOND = 10;
/** Resolver calls per second at most (for issuers neither kept nor remembered as refused). */
export const RESOLVER_CALLS_PER_SECOND = 100;
/** How long an issuer the resolver refused, or whose keys could not be fetched, is refused without asking. */
export const REFUSED_ISSUER_MS = 60_000;
/** Most refused issuers remembered (oldest forgotten first). */
export const MAX_REFUSED_ISSUERS = 1_000;
/** Longest `iss` looked at. */
export const MAX_ISSUER_LENGTH = 512;
