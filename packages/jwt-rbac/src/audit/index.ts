import type { Logger } from "@agent-platform/common";
import type { AuthRequest, AuthResult } from "../request.js";
import type { AuthenticatedState, AuthState } from "../state.js";
import type { AuditConfig } from "./config.js";
import { type DecisionRecorder, type DecisionSources, decisionRecorder, type HexDigest } from "./recorder.js";

export { type AuditConfig, resolveAudit } from "./config.js";
export type { DecisionSources } from "./recorder.js";

/** The recorder, and the verified token behind each refusal taken after verification (scopes, binding). */
export interface AuditTrail {
  readonly record: DecisionRecorder;
  /** `audit: "all"`: allowed answers are reported too; otherwise nothing is computed for them. */
  readonly all: boolean;
  readonly verifiedOf: WeakMap<object, AuthenticatedState>;
}

/** The audit trail `onDecision` asks for; undefined without it. */
export function auditTrail(
  config: AuditConfig | undefined,
  logger: Logger,
  digest: HexDigest,
): AuditTrail | undefined {
  if (config === undefined) return undefined;
  return { record: decisionRecorder(config, logger, digest), all: config.all, verifiedOf: new WeakMap() };
}

/** A refusal of a verified token: the audit reports who it was. The refusal is returned as is. */
export function refusalOf<R extends object>(
  trail: AuditTrail | undefined,
  result: R,
  verified?: AuthState,
): R {
  if (verified !== undefined) trail?.verifiedOf.set(result, verified as AuthenticatedState);
  return result;
}

type Authenticate<C extends object> = (request: AuthRequest) => AuthResult<C> | Promise<AuthResult<C>>;

/**
 * With `onDecision`: each answer of `authenticate` is reported once decided, and handed back as it is; without it,
 * `authenticate` itself.
 */
export function audited<C extends object>(
  trail: AuditTrail | undefined,
  authenticate: Authenticate<C>,
  sources: (request: AuthRequest, method: string) => DecisionSources,
): Authenticate<C> {
  if (trail === undefined) return authenticate;
  const report = (request: AuthRequest, result: AuthResult<C>): AuthResult<C> => {
    if (result.ok && !trail.all) return result;
    const method = request.method.toUpperCase();
    trail.record(method, result, trail.verifiedOf.get(result), sources(request, method));
    return result;
  };
  return (request) => {
    const result = authenticate(request);
    return result instanceof Promise
      ? result.then((settled) => report(request, settled))
      : report(request, result);
  };
}
