import { type AuthError, invalidTokenError } from "../../errors.js";

export interface ClaimRules {
  /** Seconds. */
  readonly clockTolerance: number;
  /** Expected audiences; `undefined` skips the check. */
  readonly audience: ReadonlySet<string> | undefined;
  readonly audienceClaim: string;
  /** Expected issuers; `undefined` skips the check. */
  readonly issuer: ReadonlySet<string> | undefined;
}

/** Absent, or a finite number (RFC 7519 NumericDate). */
function isNumericDate(value: unknown): value is number | undefined {
  return value === undefined || (typeof value === "number" && Number.isFinite(value));
}

const notNumeric = (name: string) =>
  invalidTokenError("invalid_claim", `Invalid token: '${name}' claim must be a number`);

function matchesAny(value: unknown, expected: ReadonlySet<string>): boolean {
  if (typeof value === "string") return expected.has(value);
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item === "string" && expected.has(item)) return true;
  return false;
}

/**
 * The one claims check shared by every verifier. Runs only after the signature holds, so a forged
 * token learns nothing about the claims rules. `nowSeconds` may be fractional.
 */
export function checkClaims(
  payload: Record<string, unknown>,
  rules: ClaimRules,
  nowSeconds: number,
): AuthError | undefined {
  const { exp, nbf, iat } = payload;
  // `1e400` parses to Infinity, and strings or nulls are not NumericDate: all refused.
  if (!isNumericDate(exp)) return notNumeric("exp");
  if (!isNumericDate(nbf)) return notNumeric("nbf");
  if (!isNumericDate(iat)) return notNumeric("iat");
  const tolerance = rules.clockTolerance;
  if (nbf !== undefined && nbf > nowSeconds + tolerance) {
    return invalidTokenError("not_yet_valid", "Invalid token: token is not yet valid");
  }
  if (iat !== undefined && iat > nowSeconds + tolerance) {
    return invalidTokenError("issued_in_future", "Invalid token: token was issued in the future");
  }
  if (exp !== undefined && exp <= nowSeconds - tolerance) {
    return invalidTokenError("expired", "Token has expired");
  }
  if (rules.issuer !== undefined && !(typeof payload.iss === "string" && rules.issuer.has(payload.iss))) {
    return invalidTokenError("invalid_issuer", "Invalid token: unexpected issuer");
  }
  if (rules.audience !== undefined && !matchesAny(payload[rules.audienceClaim], rules.audience)) {
    return invalidTokenError("invalid_audience", "Invalid token audience");
  }
  return undefined;
}
