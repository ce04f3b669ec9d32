import type { Logger } from "@agent-platform/common";
import type { AuthError } from "../errors.js";
import type { AuthResult } from "../request.js";
import type { AuthenticatedState } from "../state.js";
import type { AuditConfig } from "./config.js";
import type { AccessDecision } from "./decision.js";

/** Longest `jti` reported as the token id; a longer one is replaced by the digest, as a token without one is. */
const MAX_JTI_LENGTH = 128;
const NO_SCOPES: readonly string[] = Object.freeze([]);

/** What the recorder reads from the authenticator, computed only when a decision is reported. */
export interface DecisionSources {
  /**
   * The canonical path of the request, relative to the mount, and the scopes its route needs (undefined when
   * authorization is off or the route is unmapped); undefined when the path itself was refused.
   */
  route(): { readonly path: string; readonly required: readonly string[] | undefined } | undefined;
  /** The token the request carried, as sent; undefined when it carried none (or none readable). */
  token(): string | undefined;
}

/** `SHA-256(text)` as lower-case hex, synchronously where the runtime can (node:crypto), else a promise. */
export type HexDigest = (text: string) => string | Promise<string>;

/**
 * Reports a decision (an allowed one only under `audit: "all"`, which `audited` checks), never delaying or
 * changing the answer it is given.
 */
export type DecisionRecorder = (
  method: string,
  result: AuthResult<object>,
  verified: AuthenticatedState | undefined,
  sources: DecisionSources,
) => void;

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s*[\r\n]+\s*/g, " ").slice(0, 500);
}

function subjectOf(state: AuthenticatedState<object>): string | null {
  const sub = (state.claims as { sub?: unknown }).sub;
  return typeof sub === "string" ? sub : state.userId;
}

function issuerOf(state: AuthenticatedState<object>): string | null {
  const iss = (state.claims as { iss?: unknown }).iss;
  return typeof iss === "string" ? iss : null;
}

function jtiOf(state: AuthenticatedState<object> | undefined): string | undefined {
  const jti = (state?.claims as { jti?: unknown } | undefined)?.jti;
  return typeof jti === "string" && jti !== "" && jti.length <= MAX_JTI_LENGTH ? jti : undefined;
}

/** The checked `onDecision`/`audit` options (see `resolveAudit`) as a recorder. */
export function decisionRecorder(
  { onDecision }: AuditConfig,
  logger: Logger,
  digest: HexDigest,
): DecisionRecorder {
  // A verified token's id, computed once per verified token: keyed by its claims object, which the cached state and
  // every state made from it for one request (resource ids, a nonce header) share.
  const ids = new WeakMap<object, string>();

  const failed = (error: unknown) => {
    logger.error(`jwt-rbac: onDecision failed (the answer was not affected): ${messageOf(error)}`);
  };
  const deliver = (decision: AccessDecision) => {
    try {
      const returned = onDecision(decision) as { then?: unknown } | undefined;
      if (returned !== null && typeof returned?.then === "function")
        (returned as PromiseLike<unknown>).then(undefined, failed);
    } catch (error) {
      failed(error);
    }
  };

  return (method, result, verified, sources) => {
    const state = result.ok ? result.state : verified;
    // Passed on without authentication (an excluded path, a CORS preflight): not an access decision.
    if (result.ok && !result.state.authenticated) return;
    const authenticated = state?.authenticated === true ? state : undefined;
    const time = Date.now();
    const route = sources.route();
    const required = route?.required;
    const error: AuthError | undefined = result.ok ? undefined : result.error;
    const build = (tokenId: string | null): AccessDecision =>
      Object.freeze({
        time,
        allowed: result.ok,
        status: error === undefined ? 200 : error.status,
        reason: error === undefined ? ("ok" as const) : error.reason,
        method,
        path: route === undefined ? null : route.path,
        required: required === undefined ? null : Object.freeze([...required]),
        scopes: authenticated === undefined ? NO_SCOPES : Object.freeze([...authenticated.scopes]),
        subject: authenticated === undefined ? null : subjectOf(authenticated),
        issuer: authenticated === undefined ? null : issuerOf(authenticated),
        tokenId,
      });

    let tokenId: string | Promise<string> | null;
    const known = authenticated === undefined ? undefined : ids.get(authenticated.claims);
    if (known !== undefined) tokenId = known;
    else {
      const jti = jtiOf(authenticated);
      const token = authenticated?.token ?? sources.token();
      if (jti !== undefined) tokenId = jti;
      else if (token === undefined) tokenId = null;
      else {
        const hex = digest(token);
        tokenId = typeof hex === "string" ? hex.slice(0, 16) : hex.then((full) => full.slice(0, 16));
      }
      if (authenticated !== undefined && typeof tokenId === "string") ids.set(authenticated.claims, tokenId);
    }
    // After the answer is handed back: the listener runs on a later microtask (or once the digest settles).
    if (tokenId instanceof Promise) {
      tokenId.then((id) => {
        if (authenticated !== undefined) ids.set(authenticated.claims, id);
        deliver(build(id));
      }, failed);
    } else {
      const id = tokenId;
      queueMicrotask(() => deliver(build(id)));
    }
  };
}
