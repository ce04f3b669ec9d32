import type { Logger } from "@agent-platform/common";
import { configError, loggerOption } from "@agent-platform/common/internal";
import type { JWK } from "jose";
import { keySourcesFromEnv } from "./env.js";
import {
  type CacheOptions,
  DEFAULT_CACHE,
  DEFAULT_CLOCK_TOLERANCE,
  DEFAULT_MAX_TOKEN_LENGTH,
  DEFAULT_REMOTE_KEYS,
  type IssuerOptions,
  type JwtAlgorithm,
  type JwtRbacOptions,
  MAX_REMOTE_KEYS_AGE_MS,
  TokenSource,
} from "./options.js";
import { PLATFORM_ADMIN_SCOPE, PLATFORM_POLICY } from "./platform-policy/index.js";
import type { RbacPolicy } from "./rbac/policy.js";
import { parseScope, type ScopeAliases } from "./rbac/scopes.js";
import type { ClaimNames } from "./state.js";
import { type DpopConfig, resolveDpop } from "./token/dpop/index.js";
import { type OpaqueConfig, resolveOpaque } from "./token/introspection/index.js";
import { isAllowedRemoteUrl } from "./token/keys/fetch-json.js";
import { checkKeyShapes, type KeySources, normalisePem, parseJwks } from "./token/keys/keys.js";
import type { RemoteKeysSettings } from "./token/keys/remote-jwks.js";
import { DEFAULT_MAX_TENANT_ISSUERS, type IssuerResolver } from "./token/tenants/options.js";
import {
  compileTemplate,
  type IssuerTemplate,
  isTemplate,
  type TenantsConfig,
} from "./token/tenants/template.js";
import { isSupportedAlgorithm } from "./token/verify/algorithms.js";
import type { ClaimRules } from "./token/verify/claims.js";
import type { Runtime } from "./token/verify/signature-types.js";

/** One trusted issuer (or, without `issuers`, the top-level options): its keys and claim rules. */
export interface IssuerConfig extends KeySources, ClaimRules {
  /** How messages name it: `issuers[1]`, or `jwksUrl` / `issuer` for the top-level options. */
  readonly option: string;
  readonly jwksUrl: URL | undefined;
  /** The issuer whose discovery document gives the JWKS URL. */
  readonly discoveryIssuer: string | undefined;
}

export interface ResolvedConfig extends ClaimNames {
  /** Every algorithm some issuer accepts. */
  readonly algorithms: readonly JwtAlgorithm[];
  /** At least one. Without `issuers`, exactly one (whose `issuer` set may be undefined: any issuer). */
  readonly issuers: readonly IssuerConfig[];
  readonly remoteKeys: RemoteKeysSettings;
  readonly resourceMetadata: string | undefined;
  readonly validate: boolean;
  readonly authorization: boolean;
  readonly tokenSource: TokenSource;
  readonly allowedOrigins: ReadonlySet<string> | undefined;
  /** Lower-cased. */
  readonly tokenHeaderKey: string;
  readonly tokenHeaderName: string;
  readonly cookieName: string;
  readonly clockTolerance: number;
  readonly scopeMappings: Readonly<Record<string, readonly string[]>>;
  readonly excludedRoutePaths: readonly string[];
  readonly adminScope: string;
  /** Resources whose `GET /<resource>` is a listing route. */
  readonly listingResources: ReadonlySet<string>;
  /** Legacy resource names read as current ones; undefined when none. */
  readonly scopeAliases: ScopeAliases | undefined;
  readonly unmappedRoutes: "allow" | "deny";
  readonly cache: CacheOptions | false;
  readonly logger: Logger;
  readonly maxTokenLength: number;
  readonly caseSensitiveRoutes: boolean;
  /** Lower-cased, without `application/`. */
  readonly requireTyp: string | undefined;
  readonly dpop: DpopConfig | undefined;
  readonly opaque: OpaqueConfig | undefined;
  /** Issuers known only when a token names them (templates, resolver). */
  readonly tenants:
    | (TenantsConfig & { readonly resolveEntry: (entry: IssuerOptions, option: string) => IssuerConfig })
    | undefined;
}

const TOKEN_SOURCES: ReadonlySet<string> = new Set(Object.values(TokenSource));
// RFC 7230 token characters: what a header name may contain.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function toSet(value: string | readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  return new Set(typeof value === "string" ? [value] : value);
}

/** Each must be a serialised http(s) origin: scheme, host and port only, as an `Origin` header carries it. */
function resolveOrigins(origins: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (origins === undefined) return undefined;
  return new Set(
    origins.map((origin) => {
      let url: URL | undefined;
      try {
        url = new URL(origin);
      } catch {
        url = undefined;
      }
      if (
        url === undefined ||
        !/^https?:$/.test(url.protocol) ||
        url.origin !== origin.replace(/\/$/, "").toLowerCase()
      ) {
        throw configError(
          "jwt-rbac",
          `allowedOrigins: "${origin}" is not an origin (scheme://host[:port], http or https, no path)`,
        );
      }
      return url.origin;
    }),
  );
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw configError("jwt-rbac", `${name} must be a positive integer`);
  return value;
}

function nonNegativeNumber(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0)
    throw configError("jwt-rbac", `${name} must be a non-negative number`);
  return value;
}

function resolveAlgorithms(given: readonly string[], option: string): JwtAlgorithm[] {
  if (given.length === 0) throw configError("jwt-rbac", `${option} must name at least one algorithm`);
  for (const alg of given) {
    if (!isSupportedAlgorithm(alg)) {
      throw configError(
        "jwt-rbac",
        `unsupported algorithm "${alg}" (use HS256/384/512, RS256/384/512, PS256/384/512, ES256/384/512 or EdDSA)`,
      );
    }
  }
  return [...new Set(given as JwtAlgorithm[])];
}

function resolveCache(cache: JwtRbacOptions["cache"]): CacheOptions | false {
  if (cache === false) return false;
  const resolved = { ...DEFAULT_CACHE, ...cache };
  positiveInteger(resolved.max, "cache.max");
  positiveInteger(resolved.ttlMs, "cache.ttlMs");
  return resolved;
}

/** Required scopes are written `resource:action` (or the admin scope); a legacy resource name is read as its current one. */
function resolveMappings(
  policy: Readonly<Record<string, readonly string[]>>,
  mappings: JwtRbacOptions["scopeMappings"],
  adminScope: string,
  aliases: ScopeAliases | undefined,
): Readonly<Record<string, readonly string[]>> {
  const merged: Record<string, readonly string[]> = { ...policy, ...mappings };
  for (const [route, scopes] of Object.entries(merged)) {
    if (!Array.isArray(scopes))
      throw configError("jwt-rbac", `scopeMappings["${route}"] must be an array of scopes`);
    merged[route] = scopes.map((scope: unknown) => {
      const parsed = typeof scope === "string" ? parseScope(scope, adminScope, aliases) : undefined;
      if (parsed === undefined || (parsed.kind === "resource" && (scope as string).split(":").length !== 2)) {
        throw configError(
          "jwt-rbac",
          `scopeMappings["${route}"]: "${String(scope)}" is not a required scope of the form "resource:action"`,
        );
      }
      return parsed.kind === "admin" ? adminScope : `${parsed.resource}:${parsed.action}`;
    });
  }
  return merged;
}

/** A resource name the scope grammar accepts (`<name>:<action>` parses). */
function isResourceName(name: unknown): name is string {
  if (typeof name !== "string") return false;
  const parsed = parseScope(`${name}:read`, undefined);
  return parsed?.kind === "resource" && parsed.resource === name;
}

/** The policy's legacy names, unless `legacyScopeAliases: false`; each side a scope part. */
function resolveAliases(policy: RbacPolicy, enabled: boolean): ScopeAliases | undefined {
  if (!enabled || policy.scopeAliases === undefined) return undefined;
  const entries = Object.entries(policy.scopeAliases);
  for (const [legacy, current] of entries) {
    if (!isResourceName(legacy) || !isResourceName(current) || legacy === current) {
      throw configError(
        "jwt-rbac",
        `policy.scopeAliases: "${legacy}" -> "${String(current)}" must map one resource name to another`,
      );
    }
  }
  return entries.length === 0 ? undefined : new Map(entries);
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

function remoteUrl(value: string, option: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw configError("jwt-rbac", `${option} "${value}" is not a URL`);
  }
  if (!isAllowedRemoteUrl(url)) {
    throw configError("jwt-rbac", `${option} must use https (plain http is accepted only on loopback)`);
  }
  return url;
}

function resolveRemoteKeys(options: JwtRbacOptions["remoteKeys"]): RemoteKeysSettings {
  const given = { ...DEFAULT_REMOTE_KEYS, ...options };
  const cooldownMs = nonNegativeNumber(given.cooldownMs, "remoteKeys.cooldownMs");
  return {
    timeoutMs: positiveInteger(given.timeoutMs, "remoteKeys.timeoutMs"),
    maxBytes: positiveInteger(given.maxBytes, "remoteKeys.maxBytes"),
    cooldownMs,
    defaultMs: nonNegativeNumber(given.maxAgeMs, "remoteKeys.maxAgeMs"),
    minMs: cooldownMs,
    maxMs: Math.max(cooldownMs, MAX_REMOTE_KEYS_AGE_MS),
  };
}

interface KeySourceOptions {
  readonly verificationKeys?: readonly string[] | undefined;
  readonly jwks?: JwtRbacOptions["jwks"];
  readonly jwksUrl?: string | undefined;
  readonly discovery?: boolean | undefined;
}

/**
 * The key sources of one issuer. `prefix` names its options in messages (`""` top-level,
 * `"issuers[1]."`); `discoveryIssuer` is the issuer string discovery starts from.
 */
function resolveKeySources(
  source: KeySourceOptions,
  algorithms: readonly JwtAlgorithm[],
  prefix: string,
  discoveryIssuer: string | undefined,
  fileJwks: readonly JWK[],
): Pick<IssuerConfig, "verificationKeys" | "jwks" | "jwksUrl" | "discoveryIssuer"> {
  const verificationKeys = source.verificationKeys ?? [];
  if (!Array.isArray(verificationKeys)) {
    throw configError("jwt-rbac", `${prefix}verificationKeys must be an array of key strings`);
  }
  checkKeyShapes(verificationKeys, algorithms, `${prefix}verificationKeys`);
  const jwks =
    source.jwks === undefined ? [...fileJwks] : [...parseJwks(source.jwks, `${prefix}jwks`), ...fileJwks];
  const jwksUrl = source.jwksUrl === undefined ? undefined : remoteUrl(source.jwksUrl, `${prefix}jwksUrl`);
  if (source.discovery === true) {
    if (discoveryIssuer === undefined) {
      throw configError("jwt-rbac", `${prefix}discovery needs one \`issuer\` string to discover`);
    }
    if (jwksUrl !== undefined) {
      throw configError("jwt-rbac", `${prefix}discovery and ${prefix}jwksUrl exclude each other: pick one`);
    }
    remoteUrl(discoveryIssuer, `${prefix}issuer (with discovery)`);
  }
  return {
    verificationKeys: verificationKeys.map(normalisePem),
    jwks,
    jwksUrl,
    discoveryIssuer: source.discovery === true ? discoveryIssuer : undefined,
  };
}

function hasKeys(
  keys: Pick<IssuerConfig, "verificationKeys" | "jwks" | "jwksUrl" | "discoveryIssuer">,
): boolean {
  return (
    keys.verificationKeys.length > 0 ||
    keys.jwks.length > 0 ||
    keys.jwksUrl !== undefined ||
    keys.discoveryIssuer !== undefined
  );
}

function resolveAudience(options: JwtRbacOptions): ReadonlySet<string> | undefined {
  // An audience given explicitly is always checked, as jose and every peer check it; `verifyAudience`
  // only turns on the platform-instance default.
  if (options.audience !== undefined) {
    const audience = toSet(options.audience) as ReadonlySet<string>;
    if (audience.size === 0) throw configError("jwt-rbac", "audience must not be empty");
    return audience;
  }
  if (!(options.verifyAudience ?? false)) return undefined;
  if (options.platformId === undefined || options.platformId === "") {
    throw configError("jwt-rbac", "verifyAudience needs `audience` or `platformId`");
  }
  return new Set([options.platformId]);
}

const TOP_LEVEL_KEY_OPTIONS = [
  "verificationKeys",
  "secretKey",
  "jwks",
  "jwksFile",
  "jwksUrl",
  "discovery",
  "issuer",
] as const;

/** One `issuers` entry (listed, from a template, or from the resolver) as an IssuerConfig. */
function resolveIssuerEntry(
  entry: IssuerOptions,
  option: string,
  rules: Omit<ClaimRules, "issuer" | "audience">,
  audience: ReadonlySet<string> | undefined,
  algorithms: readonly JwtAlgorithm[],
): IssuerConfig {
  if (typeof entry?.issuer !== "string" || entry.issuer === "") {
    throw configError("jwt-rbac", `${option}.issuer must be a non-empty string`);
  }
  const own =
    entry.algorithms === undefined ? algorithms : resolveAlgorithms(entry.algorithms, `${option}.algorithms`);
  const keys = resolveKeySources(entry, own, `${option}.`, entry.issuer, []);
  if (!hasKeys(keys)) {
    throw configError(
      "jwt-rbac",
      `${option} ("${entry.issuer}") has no key source: give jwksUrl, discovery: true, verificationKeys or jwks`,
    );
  }
  const ownAudience = entry.audience === undefined ? audience : toSet(entry.audience);
  if (ownAudience !== undefined && ownAudience.size === 0) {
    throw configError("jwt-rbac", `${option}.audience must not be empty`);
  }
  return {
    ...rules,
    ...keys,
    option,
    algorithms: own,
    issuer: new Set([entry.issuer]),
    audience: ownAudience,
  };
}

/**
 * `issuers`: a list (each entry chosen by its exact `iss`, or a template with its tenants) or a resolver.
 * Returns the listed issuers and, for templates and a resolver, the tenants' configuration.
 */
function resolveIssuers(
  options: JwtRbacOptions,
  given: readonly IssuerOptions[] | IssuerResolver,
  rules: Omit<ClaimRules, "issuer" | "audience">,
  audience: ReadonlySet<string> | undefined,
  algorithms: readonly JwtAlgorithm[],
): { issuers: IssuerConfig[]; tenants: ResolvedConfig["tenants"] } {
  const resolver = typeof given === "function" ? given : undefined;
  const entries = resolver === undefined ? given : [];
  if (resolver === undefined && (!Array.isArray(entries) || entries.length === 0)) {
    throw configError("jwt-rbac", "issuers must list at least one issuer, or be a resolver function");
  }
  const mixed = TOP_LEVEL_KEY_OPTIONS.filter((name) => options[name] !== undefined);
  if (mixed.length > 0) {
    throw configError(
      "jwt-rbac",
      `issuers excludes the top-level ${mixed.join(", ")}: give keys and issuer inside each issuers entry`,
    );
  }
  const resolveEntry = (entry: IssuerOptions, option: string) =>
    resolveIssuerEntry(entry, option, rules, audience, algorithms);
  const seen = new Set<string>();
  const issuers: IssuerConfig[] = [];
  const templates: IssuerTemplate[] = [];
  (entries as readonly IssuerOptions[]).forEach((entry, index) => {
    const option = `issuers[${index}]`;
    if (isTemplate(entry)) {
      const template = compileTemplate(entry, option);
      // Checked once with a sample tenant, so a bad template fails at construction, not at its first token.
      resolveEntry(
        {
          ...entry,
          issuer: entry.issuer.replace(/\{[^}]*\}/, "tenant"),
          jwksUrl: entry.jwksUrl?.replace(/\{[^}]*\}/g, "tenant"),
        } as IssuerOptions,
        option,
      );
      templates.push(template);
      return;
    }
    if (seen.has(entry?.issuer))
      throw configError("jwt-rbac", `${option}: issuer "${entry.issuer}" is listed twice`);
    seen.add(entry?.issuer);
    if (entry?.tenants !== undefined)
      throw configError("jwt-rbac", `${option}.tenants is only for a template issuer ({placeholder})`);
    issuers.push(resolveEntry(entry, option));
  });
  const max = options.maxTenantIssuers ?? DEFAULT_MAX_TENANT_ISSUERS;
  if (!Number.isSafeInteger(max) || max <= 0)
    throw configError("jwt-rbac", "maxTenantIssuers must be a positive integer");
  const tenants =
    templates.length === 0 && resolver === undefined ? undefined : { templates, resolver, max, resolveEntry };
  return { issuers, tenants };
}

/** A media type's subtype as RFC 6838 §4.2 allows it (`at+jwt`), optionally with `application/`. */
function resolveTyp(typ: string | undefined): string | undefined {
  if (typ === undefined) return undefined;
  if (typeof typ !== "string" || !/^(application\/)?[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/.test(typ)) {
    throw configError("jwt-rbac", `requireTyp "${String(typ)}" is not a media type such as "at+jwt"`);
  }
  return typ.toLowerCase().replace(/^application\//, "");
}

/**
 * Options, defaults and the environment, resolved once and validated synchronously, so construction
 * fails fast. Key import itself is asynchronous (WebCrypto) and happens right after.
 */
export function resolveConfig(options: JwtRbacOptions, runtime: Runtime): ResolvedConfig {
  const logger = loggerOption(options.logger, "jwt-rbac");
  const algorithms = resolveAlgorithms(options.algorithms ?? [options.algorithm ?? "RS256"], "algorithms");
  const validate = options.validate ?? true;

  const clockTolerance = options.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE;
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw configError("jwt-rbac", "clockTolerance must be a non-negative number of seconds");
  }
  const audienceClaim = options.audienceClaim ?? "aud";
  const audience = resolveAudience(options);
  const rules = { clockTolerance, audienceClaim };

  let issuers: IssuerConfig[];
  let tenants: ResolvedConfig["tenants"];
  if (options.issuers !== undefined) {
    ({ issuers, tenants } = resolveIssuers(options, options.issuers, rules, audience, algorithms));
  } else {
    // Env fills in only when no key source is configured at all: explicit configuration is never mixed
    // with keys from the environment.
    const explicit =
      options.verificationKeys !== undefined ||
      options.secretKey !== undefined ||
      options.jwks !== undefined ||
      options.jwksFile !== undefined ||
      options.jwksUrl !== undefined ||
      options.discovery !== undefined;
    const fromEnv = explicit ? {} : keySourcesFromEnv();
    const jwksFile = explicit ? options.jwksFile : fromEnv.jwksFile;

    const verificationKeys = [...(options.verificationKeys ?? fromEnv.verificationKeys ?? [])];
    if (options.secretKey !== undefined) {
      logger.warn("jwt-rbac: `secretKey` is deprecated; pass it in `verificationKeys`");
      verificationKeys.push(options.secretKey);
    }
    const issuer = toSet(options.issuer);
    if (issuer !== undefined && issuer.size === 0) throw configError("jwt-rbac", "issuer must not be empty");
    const single = typeof options.issuer === "string" ? options.issuer : undefined;
    const fileJwks =
      jwksFile === undefined ? [] : parseJwks(runtime.readJwksFile(jwksFile), `JWKS file "${jwksFile}"`);
    const keys = resolveKeySources({ ...options, verificationKeys }, algorithms, "", single, fileJwks);
    if (validate && !hasKeys(keys)) {
      throw configError(
        "jwt-rbac",
        "no verification key: pass verificationKeys, jwks, jwksFile, jwksUrl, discovery or issuers, or set JWT_VERIFICATION_KEY or JWT_JWKS_FILE",
      );
    }
    const option =
      keys.discoveryIssuer !== undefined ? "issuer" : keys.jwksUrl !== undefined ? "jwksUrl" : "keys";
    issuers = [{ ...rules, ...keys, option, algorithms, issuer, audience }];
  }
  if (!validate) {
    logger.warn(
      "jwt-rbac: validate is false — tokens are NOT verified. Never use this outside local development",
    );
  }

  const tokenSource = options.tokenSource ?? TokenSource.HEADER;
  if (!TOKEN_SOURCES.has(tokenSource)) throw configError("jwt-rbac", `unknown tokenSource "${tokenSource}"`);
  const tokenHeaderKey = options.tokenHeaderKey ?? "Authorization";
  if (!HEADER_NAME.test(tokenHeaderKey))
    throw configError("jwt-rbac", `tokenHeaderKey "${tokenHeaderKey}" is not a header name`);

  // Fail closed: a route nobody mapped is refused, unless the application opts into "allow".
  const unmappedRoutes = options.unmappedRoutes ?? "deny";
  if (unmappedRoutes !== "allow" && unmappedRoutes !== "deny") {
    throw configError("jwt-rbac", 'unmappedRoutes must be "allow" or "deny"');
  }
  const policy = options.policy ?? PLATFORM_POLICY;
  // The spec's default admin scope, also for a policy that names none.
  const adminScope = options.adminScope ?? policy.adminScope ?? PLATFORM_ADMIN_SCOPE;
  // A scope string is split on spaces, so a scope with one could be granted only by an array claim.
  if (adminScope === "" || adminScope.includes(" ")) {
    throw configError("jwt-rbac", "adminScope must be one scope: not empty, no space");
  }
  const scopeAliases = resolveAliases(policy, options.legacyScopeAliases ?? true);
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
    authorization:
      options.authorization ??
      (options.scopeMappings !== undefined || options.policy?.scopeMappings !== undefined),
    tokenSource,
    allowedOrigins: resolveOrigins(options.allowedOrigins),
    tokenHeaderKey: tokenHeaderKey.toLowerCase(),
    tokenHeaderName: tokenHeaderKey,
    cookieName: options.cookieName ?? "access_token",
    scopesClaim: options.scopesClaim ?? "scopes",
    userIdClaim: options.userIdClaim ?? "sub",
    sessionIdClaim: options.sessionIdClaim ?? "session_id",
    audienceClaim,
    clockTolerance,
    dependenciesClaims: options.dependenciesClaims ?? [],
    sessionStateClaims: options.sessionStateClaims ?? [],
    scopeMappings: resolveMappings(
      (options.defaultScopeMappings ?? true) ? (policy.scopeMappings ?? {}) : {},
      options.scopeMappings,
      adminScope,
      scopeAliases,
    ),
    excludedRoutePaths: options.excludedRoutePaths ?? policy.excludedRoutePaths ?? [],
    adminScope,
    listingResources: resolveListing(policy.listingResources),
    scopeAliases,
    unmappedRoutes,
    cache: resolveCache(options.cache),
    logger,
    caseSensitiveRoutes: options.caseSensitiveRoutes ?? true,
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
  };
}
