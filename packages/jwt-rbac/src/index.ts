import type { JWTPayload } from "jose";
import { runtime } from "#runtime";
import { createJwtAuthOn, type JwtAuth } from "./auth.js";
import type { JwtRbacOptions } from "./options.js";

// The platform's shared configuration error and logger shape, so a user of this package needs no other import.
export {
  ConfigError,
  isConfigError,
  type Logger,
  type LoggerOption,
  type LogMethod,
} from "@agent-platform/common";
export type { AccessDecision, AuditMode, DecisionListener } from "./audit/decision.js";
export type { AuthRequest, AuthResult, JwtAuth } from "./auth.js";
export { keySourcesFromEnv } from "./env.js";
export {
  AuthError,
  type AuthErrorBody,
  type AuthErrorCode,
  type AuthErrorReason,
  isAuthError,
  REALM,
} from "./errors.js";
export {
  type CacheOptions,
  type IssuerOptions,
  type JwtAlgorithm,
  type JwtRbacOptions,
  type RemoteKeysOptions,
  SUPPORTED_ALGORITHMS,
  TokenSource,
} from "./options.js";
export { hasRequiredScopes, PLATFORM_POLICY, parseScope } from "./platform-policy/index.js";
export type { RouteAccess } from "./rbac/access.js";
export { MAX_PATH_LENGTH } from "./rbac/canonical-path.js";
export type { RbacPolicy } from "./rbac/policy.js";
export type { ParsedScope } from "./rbac/scopes.js";
export type { AnonymousState, AuthenticatedState, AuthState } from "./state.js";
export type { DpopNonceOptions, DpopOptions, ReplayStore } from "./token/dpop/options.js";
export {
  PostgresReplayStore,
  type PostgresReplayStoreOptions,
  type SqlQuery,
} from "./token/dpop/postgres-replay-store.js";
export { MemoryReplayStore } from "./token/dpop/replay.js";
export type { HeadersInput } from "./token/index.js";
export type {
  ClientAuth,
  IntrospectionOptions,
  TokenVerifierHook,
} from "./token/introspection/options.js";
export type { PublicOrigin, PublicOriginRequest } from "./token/read/public-origin.js";
export type { IssuerResolver } from "./token/tenants/options.js";

/**
 * Builds the authenticator once (options, env, route tables, key import). Throws a ConfigError
 * for invalid configuration; key import failures reject `ready`.
 */
export function createJwtAuth<C extends object = JWTPayload>(options: JwtRbacOptions = {}): JwtAuth<C> {
  return createJwtAuthOn<C>(runtime, options);
}
