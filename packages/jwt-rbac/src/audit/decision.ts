import type { AuthErrorReason } from "../errors.js";

/**
 * One access decision, as `onDecision` receives it: who asked for what, and the answer. It never holds the
 * token: `tokenId` names it (its `jti`, else a digest), so refusals of one token can be grouped.
 */
export interface AccessDecision {
  /** When the decision was taken, in milliseconds since the epoch (`Date.now()`). */
  readonly time: number;
  readonly allowed: boolean;
  /** The refusal's HTTP status (400, 401, 403, 503); 200 when the request was passed on to the route. */
  readonly status: number;
  /** The refusal's `AuthError` reason; `"ok"` when allowed. */
  readonly reason: AuthErrorReason | "ok";
  /** Upper-cased. */
  readonly method: string;
  /** The canonical path the decision was taken on (relative to the mount); null when the path itself was refused. */
  readonly path: string | null;
  /** The scopes the route needs by the tables; null when authorization is off, the route is unmapped or the path was refused. */
  readonly required: readonly string[] | null;
  /** The scopes the verified token holds; empty when no token was verified. */
  readonly scopes: readonly string[];
  /** The verified token's `sub` (else its user id claim); null when no token was verified. */
  readonly subject: string | null;
  /** The verified token's `iss`; null when no token was verified or it has none. */
  readonly issuer: string | null;
  /**
   * The verified token's `jti` (at most 128 characters), else the first 16 hex characters of the SHA-256 of the
   * token as sent; null when the request carried no token.
   */
  readonly tokenId: string | null;
}

/** Called once per decision; what it returns (a promise included) is not awaited, and what it throws is logged. */
export type DecisionListener = (decision: AccessDecision) => unknown;

/** Which decisions reach `onDecision`: refusals only (default), or every authenticated request too. */
export type AuditMode = "denied" | "all";
