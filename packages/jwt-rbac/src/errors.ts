/** Realm announced in every `WWW-Authenticate` challenge. */
export const REALM = "platform";

/** The `error_code` of an `AuthError` answer. */
export type AuthErrorCode = "BAD_REQUEST" | "UNAUTHENTICATED" | "FORBIDDEN" | "CSRF_REJECTED" | "UNAVAILABLE";

/**
 * Why a request was refused, as a stable machine-readable word (finer than `code`).
 * Safe to log: it never contains the token or the text of a crypto failure.
 */
export type AuthErrorReason =
  | "token_missing"
  | "invalid_scheme"
  | "repeated_credentials"
  | "token_too_large"
  | "malformed"
  | "algorithm_not_allowed"
  | "unsupported_crit"
  | "unknown_kid"
  | "key_unavailable"
  | "invalid_signature"
  | "invalid_claim"
  | "not_yet_valid"
  | "issued_in_future"
  | "expired"
  | "invalid_audience"
  | "invalid_issuer"
  | "insufficient_scope"
  | "route_not_mapped"
  | "invalid_path"
  | "cross_site_request"
  | "origin_unknown"
  | "invalid_typ"
  | "invalid_dpop_proof"
  | "use_dpop_nonce"
  | "introspection_unavailable"
  | "token_inactive";

const STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  CSRF_REJECTED: 403,
  UNAVAILABLE: 503,
} as const satisfies Record<AuthErrorCode, number>;

/** The JSON body of an `AuthError` answer. */
export interface AuthErrorBody {
  readonly detail: string;
  readonly error_code: AuthErrorCode;
}

/**
 * A refused request. The HTTP answer (status, JSON body, RFC 6750 challenge) is built here once,
 * so every adapter answers identically.
 */
export class AuthError extends Error {
  override readonly name = "AuthError";
  readonly code: AuthErrorCode;
  readonly status: 400 | 401 | 403 | 503;
  readonly reason: AuthErrorReason;
  readonly detail: string;
  readonly wwwAuthenticate: string;
  /** The JSON body, serialised. */
  readonly body: string;

  constructor(code: AuthErrorCode, reason: AuthErrorReason, detail: string, wwwAuthenticate: string) {
    super(detail);
    this.code = code;
    this.status = STATUS[code];
    this.reason = reason;
    this.detail = detail;
    this.wwwAuthenticate = wwwAuthenticate;
    this.body = JSON.stringify({ detail, error_code: code } satisfies AuthErrorBody);
  }

  /** Response headers of the error answer. */
  get headers(): Record<string, string> {
    return { "Content-Type": "application/json", "WWW-Authenticate": this.wwwAuthenticate };
  }

  toJSON(): AuthErrorBody {
    return { detail: this.detail, error_code: this.code };
  }
}

/** True for an AuthError from any copy of this package (ESM and CJS builds included). */
export function isAuthError(value: unknown): value is AuthError {
  return (
    value instanceof AuthError ||
    (value instanceof Error && value.name === "AuthError" && typeof (value as AuthError).body === "string")
  );
}

// Challenge parameters are quoted-strings (RFC 7235): our texts are fixed, but escape anyway.
function quote(value: string): string {
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/** 401 without an error code: the request carried no credentials at all (RFC 6750 §3.1). */
export function missingTokenError(detail: string): AuthError {
  return new AuthError("UNAUTHENTICATED", "token_missing", detail, `Bearer realm=${quote(REALM)}`);
}

/** 401 `invalid_token`. */
export function invalidTokenError(reason: AuthErrorReason, detail: string): AuthError {
  return new AuthError(
    "UNAUTHENTICATED",
    reason,
    detail,
    `Bearer realm=${quote(REALM)}, error="invalid_token", error_description=${quote(detail)}`,
  );
}

/** A refusal of the request itself rather than of its token (RFC 6750 `invalid_request`). */
function invalidRequestError(code: AuthErrorCode, reason: AuthErrorReason, detail: string): AuthError {
  return new AuthError(
    code,
    reason,
    detail,
    `Bearer realm=${quote(REALM)}, error="invalid_request", error_description=${quote(detail)}`,
  );
}

/**
 * 401 `invalid_request`: the token is given twice (a repeated header, two cookies of its name). Refused
 * rather than resolved to one of them, since proxies and frameworks disagree on which one would count.
 */
export function repeatedCredentialsError(detail: string): AuthError {
  return invalidRequestError("UNAUTHENTICATED", "repeated_credentials", detail);
}

/** 400 `BAD_REQUEST`: a path that routers could read in different ways (see canonical-path.ts). */
export function invalidPathError(problem: string): AuthError {
  return invalidRequestError("BAD_REQUEST", "invalid_path", `Invalid request path: ${problem}`);
}

/** 403 `CSRF_REJECTED`: a cookie-authenticated unsafe request that does not prove it is same-origin. */
export function crossSiteError(reason: "cross_site_request" | "origin_unknown", detail: string): AuthError {
  return invalidRequestError("CSRF_REJECTED", reason, detail);
}

// Paths in details are canonical (no quote, no control character, nothing outside ASCII), but an
// attacker chooses them: bounded, as the detail is also sent in a header.
const MAX_PATH_IN_DETAIL = 200;

/** 403 for a route no mapping covers (`unmappedRoutes: "deny"`), naming it so the fix is obvious. */
export function unmappedRouteError(method: string, path: string): AuthError {
  const shown = path.length > MAX_PATH_IN_DETAIL ? `${path.slice(0, MAX_PATH_IN_DETAIL)}...` : path;
  const detail = `Insufficient permissions. No scope mapping for ${method} ${shown}: add one to scopeMappings`;
  return new AuthError(
    "FORBIDDEN",
    "route_not_mapped",
    detail,
    `Bearer realm=${quote(REALM)}, error="insufficient_scope", error_description=${quote(detail)}`,
  );
}

/** 403 `insufficient_scope`, naming the scopes that would have been enough. */
export function insufficientScopeError(required: readonly string[]): AuthError {
  const detail = `Insufficient permissions. Required scope(s): ${required.join(", ")}`;
  return new AuthError(
    "FORBIDDEN",
    "insufficient_scope",
    detail,
    `Bearer realm=${quote(REALM)}, error="insufficient_scope", error_description=${quote(detail)}, scope=${quote(required.join(" "))}`,
  );
}

/**
 * The same refusal with `resource_metadata` added to its challenge (RFC 9728 §5.1), so a client can
 * find the authorization server from any 401 or 403.
 */
export function withResourceMetadata(error: AuthError, url: string): AuthError {
  return new AuthError(
    error.code,
    error.reason,
    error.detail,
    `${error.wwwAuthenticate}, resource_metadata=${quote(url)}`,
  );
}
