import type { JWTPayload } from "jose";

/** What a request carries after the middleware, once its token verified. */
export interface AuthenticatedState<C extends object = JWTPayload> {
  readonly authenticated: true;
  readonly userId: string | null;
  readonly sessionId: string | null;
  readonly scopes: readonly string[];
  readonly audience: string | null;
  /** The raw JWT. Never log it. */
  readonly token: string;
  readonly claims: Readonly<C>;
  readonly authorizationEnabled: boolean;
  readonly dependencies: Readonly<Record<string, unknown>>;
  readonly sessionState: Readonly<Record<string, unknown>>;
  /** `{"*"}` or the ids a listing route may return; empty on other routes. */
  readonly accessibleResourceIds: ReadonlySet<string>;
  /** The key the token is bound to (`cnf.jkt`, RFC 9449), whose proof this request carried; else null. */
  readonly confirmation: { readonly jkt: string } | null;
}

/** The state of a request that skipped authentication (excluded path, CORS preflight). */
export interface AnonymousState {
  readonly authenticated: false;
  readonly userId: null;
  readonly sessionId: null;
  readonly scopes: readonly string[];
  readonly audience: null;
  readonly token: null;
  readonly claims: null;
  readonly authorizationEnabled: boolean;
  readonly dependencies: Readonly<Record<string, unknown>>;
  readonly sessionState: Readonly<Record<string, unknown>>;
  readonly accessibleResourceIds: ReadonlySet<string>;
  readonly confirmation: null;
}

/** A request's authentication: a verified token's state, or anonymous where no token is needed. */
export type AuthState<C extends object = JWTPayload> = AuthenticatedState<C> | AnonymousState;

export const NO_IDS: ReadonlySet<string> = new Set();
const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});
const NO_SCOPES: readonly string[] = Object.freeze([]);

export function anonymousState(authorizationEnabled: boolean): AnonymousState {
  return {
    authenticated: false,
    userId: null,
    sessionId: null,
    scopes: NO_SCOPES,
    audience: null,
    token: null,
    claims: null,
    authorizationEnabled,
    dependencies: EMPTY,
    sessionState: EMPTY,
    accessibleResourceIds: NO_IDS,
    confirmation: null,
  };
}

export interface ClaimNames {
  readonly scopesClaim: string;
  readonly userIdClaim: string;
  readonly sessionIdClaim: string;
  readonly audienceClaim: string;
  readonly dependenciesClaims: readonly string[];
  readonly sessionStateClaims: readonly string[];
}

/**
 * Scopes as an array of strings, or one space-separated string (OAuth `scope`). Anything else: none. A scope
 * string is split on U+0020 only (RFC 6749 §3.3), so a tab, NBSP or any other character stays inside its token
 * ("profile\u00a0platform:admin" is one scope, which grants nothing).
 */
export function scopesFrom(value: unknown): readonly string[] {
  if (typeof value === "string") return value.split(" ").filter((scope) => scope !== "");
  if (!Array.isArray(value)) return NO_SCOPES;
  // The claim itself when every item is a string (the usual case): the state is readonly, so no copy is needed.
  for (const scope of value)
    if (typeof scope !== "string") return value.filter((item): item is string => typeof item === "string");
  return value as readonly string[];
}

function stringClaim(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function audienceFrom(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.find((item): item is string => typeof item === "string") ?? null;
  return null;
}

function pick(payload: Record<string, unknown>, names: readonly string[]): Readonly<Record<string, unknown>> {
  if (names.length === 0) return EMPTY;
  const picked: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(payload, name)) picked[name] = payload[name];
  return picked;
}

/**
 * A token's `cnf` (RFC 7800) as far as this package can check it: `{ jkt }` (RFC 9449). A `cnf` with
 * anything else (an mTLS `x5t#S256`, a malformed `jkt`) is returned as an unusable binding (`jkt: ""`),
 * so the token is refused rather than accepted as if unbound.
 */
export function confirmationOf(cnf: unknown): { readonly jkt: string } | null {
  if (cnf === undefined) return null;
  const jkt = typeof cnf === "object" && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined;
  return { jkt: typeof jkt === "string" && /^[A-Za-z0-9_-]{43}$/.test(jkt) ? jkt : "" };
}

/** The state for a verified token on a route without listing ids; built once per token (and cached with it). */
export function authenticatedState(
  token: string,
  payload: Record<string, unknown>,
  names: ClaimNames,
  authorizationEnabled: boolean,
): AuthenticatedState<Record<string, unknown>> {
  return {
    authenticated: true,
    userId: stringClaim(payload[names.userIdClaim]),
    sessionId: stringClaim(payload[names.sessionIdClaim]),
    scopes: scopesFrom(payload[names.scopesClaim]),
    audience: audienceFrom(payload[names.audienceClaim]),
    token,
    claims: payload,
    authorizationEnabled,
    dependencies: pick(payload, names.dependenciesClaims),
    sessionState: pick(payload, names.sessionStateClaims),
    accessibleResourceIds: NO_IDS,
    confirmation: confirmationOf(payload.cnf),
  };
}
