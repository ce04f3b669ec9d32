import { AuthError, type AuthErrorReason, invalidTokenError } from "../../errors.js";

// Challenge parameters are quoted-strings (RFC 7235); texts here are fixed, escaped anyway.
function quote(value: string): string {
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/** A refusal that also offers the current server nonce (`DPoP-Nonce`, RFC 9449 §8). */
export class NoncedAuthError extends AuthError {
  readonly nonce: string;
  constructor(error: AuthError, nonce: string) {
    super(error.code, error.reason, error.detail, error.wwwAuthenticate);
    this.nonce = nonce;
  }
  override get headers(): Record<string, string> {
    return { ...super.headers, "DPoP-Nonce": this.nonce };
  }
}

/**
 * The same refusal under the `DPoP` scheme (RFC 9449 §7.1), with the accepted proof algorithms: a
 * token presented with `DPoP` is answered in its own scheme, its own failures as they are for Bearer.
 */
export function inDpopScheme(error: AuthError, algs: string): AuthError {
  const rest = error.wwwAuthenticate.replace(/^(Bearer|DPoP) /, "");
  const params = rest.replace(/^(realm="[^"]*")/, `$1, algs=${quote(algs)}`);
  return new AuthError(error.code, error.reason, error.detail, `DPoP ${params}`);
}

/** The DPoP challenge appended to a Bearer one, when both schemes are accepted (`required: false`). */
export function withDpopChallenge(error: AuthError, realm: string, algs: string): AuthError {
  return new AuthError(
    error.code,
    error.reason,
    error.detail,
    `${error.wwwAuthenticate}, DPoP realm=${quote(realm)}, algs=${quote(algs)}`,
  );
}

function dpopError(reason: AuthErrorReason, error: string, detail: string, realm: string): AuthError {
  return new AuthError(
    "UNAUTHENTICATED",
    reason,
    detail,
    `DPoP realm=${quote(realm)}, error=${quote(error)}, error_description=${quote(detail)}`,
  );
}

/** 401 `invalid_dpop_proof`: the proof is missing, malformed, for another request, stale, or replayed. */
export function invalidProofError(detail: string, realm: string): AuthError {
  return dpopError("invalid_dpop_proof", "invalid_dpop_proof", `Invalid DPoP proof: ${detail}`, realm);
}

/** 401 `use_dpop_nonce`: the proof lacks the current server nonce (sent in `DPoP-Nonce`). */
export function useNonceError(realm: string): AuthError {
  return dpopError("use_dpop_nonce", "use_dpop_nonce", "Resource server requires nonce in DPoP proof", realm);
}

/** A DPoP-bound token presented as a bearer token (RFC 9449 §7.1): the downgrade, always refused. */
export function boundAsBearerError(): AuthError {
  return invalidTokenError(
    "invalid_scheme",
    "Invalid token: a DPoP-bound token must be presented with the DPoP scheme and its proof",
  );
}
