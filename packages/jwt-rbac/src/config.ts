import type { Logger } from "@agent-platform/common";
import { configError, loggerOption } from "@agent-platform/common/internal";
import { type AuditConfig, resolveAudit } from "./audit/config.js";
import { positiveInteger } from "./checks.js";
import {
  type CacheOptions,
  DEFAULT_MAX_TOKEN_LENGTH,
  type JwtAlgorithm,
  type JwtRbacOptions,
} from "./options.js";
import { PLATFORM_ADMIN_SCOPE, PLATFORM_POLICY } from "./platform-policy/index.js";
import { isResourceName, type PolicyConfig, resolvePolicy } from "./rbac/config.js";
import type { RbacPolicy } from "./rbac/policy.js";
import type { ClaimNames } from "./state.js";
import { type DpopConfig, resolveDpop } from "./token/dpop/index.js";
import { type OpaqueConfig, resolveOpaque } from "./token/introspection/index.js";
import {
  type IssuerConfig,
  remoteUrl,
  resolveRemoteKeys,
  resolveTopLevelIssuer,
} from "./token/keys/config.js";
import type { RemoteKeysSettings } from "./token/keys/remote-jwks.js";
import { type ReadingConfig, resolvePublicOrigin, resolveReading } from "./token/read/config.js";
import type { PublicOrigin } from "./token/read/public-origin.js";
import { resolveIssuers, type TenantsSettings } from "./token/tenants/config.js";
import {
  resolveAudience,
  resolveCache,
  resolveClockTolerance,
  resolveTyp,
  topLevelAlgorithms,
} from "./token/verify/config.js";
import type { Runtime } from "./token/verify/signature-types.js";

export type { IssuerConfig } from "./token/keys/config.js";

/**
 * Everything `createJwtAuth` runs on, each part resolved and validated by its own feature: reading (`token/read`),
 * keys and issuers (`token/keys`, `token/tenants`), verification (`token/verify`), DPoP, introspection and the
 * policy (`rbac`).
 */
export interface ResolvedConfig extends ClaimNames, ReadingConfig, PolicyConfig {
  /** Every algorithm some issuer accepts. */
  readonly algorithms: readonly JwtAlgorithm[];
  /** At least one. Without `issuers`, exactly one (whose `issuer` set may be undefined: any issuer). */
  readonly issuers: readonly IssuerConfig[];
  readonly remoteKeys: RemoteKeysSettings;
  readonly resourceMetadata: string | undefined;
  readonly validate: boolean;
  /** A checked origin, or the function answering one per request. */
  readonly publicOrigin: PublicOrigin | undefined;
  readonly clockTolerance: number;
  readonly cache: CacheOptions | false;
  readonly logger: Logger;
  readonly maxTokenLength: number;
  /** Lower-cased, without `application/`. */
  readonly requireTyp: string | undefined;
  readonly dpop: DpopConfig | undefined;
  readonly opaque: OpaqueConfig | undefined;
  /** Issuers known only when a token names them (templates, resolver). */
  readonly tenants: TenantsSettings | undefined;
  /** `onDecision` and `audit`; undefined without `onDecision`. */
  readonly audit: AuditConfig | undefined;
}

/**
 * Options, defaults and the environment, resolved once and validated synchronously, so construction
 * fails fast. Key import itself is asynchronous (WebCrypto) and happens right after.
 */
export function resolveConfig(options: JwtRbacOptions, runtime: Runtime): ResolvedConfig {
  const logger = loggerOption(options.logger, "jwt-rbac");
  const algorithms = topLevelAlgorithms(options);
  const validate = options.validate ?? true;
  const clockTolerance = resolveClockTolerance(options.clockTolerance);
  const audienceClaim = options.audienceClaim ?? "aud";
  const audience = resolveAudience(options);
  const rules = { clockTolerance, audienceClaim };

  const { issuers, tenants } =
    options.issuers !== undefined
      ? resolveIssuers(options, options.issuers, rules, audience, algorithms)
      : {
          issuers: [resolveTopLevelIssuer(options, runtime, logger, rules, audience, algorithms, validate)],
          tenants: undefined,
        };
  if (!validate) {
    logger.warn(
      "jwt-rbac: validate is false — tokens are NOT verified. Never use this outside local development",
    );
  }
  const reading = resolveReading(options);
  // The agent platform's policy by default, also its admin scope for a policy that names none.
  const policy = resolvePolicy(options, PLATFORM_POLICY, PLATFORM_ADMIN_SCOPE, resolveListing);
  const remoteKeys = resolveRemoteKeys(options.remoteKeys);
  const maxTokenLength = positiveInteger(
    options.maxTokenLength ?? DEFAULT_MAX_TOKEN_LENGTH,
    "maxTokenLength",
  );
  const resourceMetadata =
    options.resourceMetadata === undefined
      ? undefined
      : remoteUrl(options.resourceMetadata, "resourceMetadata").href;

  return {
    ...reading,
    ...policy,
    // Issuers made later (templates, resolver) verify within these: the top-level ones join in then.
    algorithms: [
      ...new Set([
        ...issuers.flatMap((entry) => entry.algorithms),
        ...(tenants === undefined ? [] : algorithms),
      ]),
    ],
    issuers,
    remoteKeys,
    resourceMetadata,
    validate,
    publicOrigin: resolvePublicOrigin(options.publicOrigin),
    scopesClaim: options.scopesClaim ?? "scopes",
    userIdClaim: options.userIdClaim ?? "sub",
    sessionIdClaim: options.sessionIdClaim ?? "session_id",
    audienceClaim,
    clockTolerance,
    dependenciesClaims: options.dependenciesClaims ?? [],
    sessionStateClaims: options.sessionStateClaims ?? [],
    cache: resolveCache(options.cache),
    logger,
    maxTokenLength,
    requireTyp: resolveTyp(options.requireTyp),
    dpop: resolveDpop(options.dpop),
    tenants,
    opaque: resolveOpaque(
      options.introspection,
      options.tokenVerifier,
      { ...rules, audience, issuer: undefined },
      remoteKeys,
      maxTokenLength,
    ),
    audit: resolveAudit(options),
  };
}

function resolveListing(resources: RbacPolicy["listingResources"]): ReadonlySet<string> {
  if (resources === undefined) return new Set();
  // Each names the one path segment of `GET /<resource>`.
  if (!Array.isArray(resources) || !resources.every((name) => isResourceName(name) && !name.includes("/"))) {
    throw configError(
      "jwt-rbac",
      "policy.listingResources must be an array of resource names (`agents`, not `/agents`)",
    );
  }
  return new Set(resources);
}
