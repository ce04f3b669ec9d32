import type { JWK } from "jose";
import { readEnv } from "./env.js";
import { JwtRbacConfigError } from "./errors.js";
import {
  type CacheOptions,
  DEFAULT_CACHE,
  DEFAULT_CLOCK_TOLERANCE,
  DEFAULT_MAX_TOKEN_LENGTH,
  type JwtAlgorithm,
  type JwtRbacLogger,
  type JwtRbacOptions,
  NOOP_LOGGER,
  TokenSource,
} from "./options.js";
import { DEFAULT_EXCLUDED_ROUTE_PATHS, DEFAULT_SCOPE_MAPPINGS } from "./rbac/defaults.js";
import { DEFAULT_ADMIN_SCOPE, parseScope } from "./rbac/scopes.js";
import type { ClaimNames } from "./state.js";
import { isSupportedAlgorithm } from "./token/algorithms.js";
import { checkKeyShapes, normalisePem, parseJwks } from "./token/keys.js";
import type { Platform } from "./token/signature-types.js";

export interface ResolvedConfig extends ClaimNames {
  readonly algorithms: readonly JwtAlgorithm[];
  readonly verificationKeys: readonly string[];
  readonly jwks: readonly JWK[];
  readonly jwksUrl: URL | undefined;
  readonly validate: boolean;
  readonly authorization: boolean;
  readonly tokenSource: TokenSource;
  readonly allowedOrigins: ReadonlySet<string> | undefined;
  /** Lower-cased. */
  readonly tokenHeaderKey: string;
  readonly tokenHeaderName: string;
  readonly cookieName: string;
  readonly audience: ReadonlySet<string> | undefined;
  readonly issuer: ReadonlySet<string> | undefined;
  readonly clockTolerance: number;
  readonly scopeMappings: Readonly<Record<string, readonly string[]>>;
  readonly excludedRoutePaths: readonly string[];
  readonly adminScope: string;
  readonly unmappedRoutes: "allow" | "deny";
  readonly cache: CacheOptions | false;
  readonly logger: JwtRbacLogger;
  readonly maxTokenLength: number;
  readonly caseSensitiveRoutes: boolean;
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
        throw new JwtRbacConfigError(
          `allowedOrigins: "${origin}" is not an origin (scheme://host[:port], http or https, no path)`,
        );
      }
      return url.origin;
    }),
  );
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new JwtRbacConfigError(`${name} must be a positive integer`);
  return value;
}

function resolveAlgorithms(options: JwtRbacOptions): JwtAlgorithm[] {
  const given = options.algorithms ?? [options.algorithm ?? "RS256"];
  if (given.length === 0) throw new JwtRbacConfigError("algorithms must name at least one algorithm");
  for (const alg of given) {
    if (!isSupportedAlgorithm(alg)) {
      throw new JwtRbacConfigError(
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

function resolveMappings(
  mappings: JwtRbacOptions["scopeMappings"],
  adminScope: string,
): Readonly<Record<string, readonly string[]>> {
  const merged: Record<string, readonly string[]> = { ...DEFAULT_SCOPE_MAPPINGS, ...mappings };
  for (const [route, scopes] of Object.entries(merged)) {
    if (!Array.isArray(scopes))
      throw new JwtRbacConfigError(`scopeMappings["${route}"] must be an array of scopes`);
    for (const scope of scopes) {
      const parsed = typeof scope === "string" ? parseScope(scope, adminScope) : undefined;
      if (parsed === undefined || (parsed.kind === "resource" && scope.split(":").length !== 2)) {
        throw new JwtRbacConfigError(
          `scopeMappings["${route}"]: "${String(scope)}" is not a required scope of the form "resource:action"`,
        );
      }
    }
  }
  return merged;
}

/**
 * Options, defaults and the environment, resolved once and validated synchronously, so construction
 * fails fast. Key import itself is asynchronous (WebCrypto) and happens right after.
 */
export function resolveConfig(options: JwtRbacOptions, platform: Platform): ResolvedConfig {
  const logger = options.logger ?? NOOP_LOGGER;
  const algorithms = resolveAlgorithms(options);
  const validate = options.validate ?? true;

  // Env fills in only when no key source is configured at all: explicit configuration is never mixed
  // with keys from the environment.
  const explicit =
    options.verificationKeys !== undefined ||
    options.secretKey !== undefined ||
    options.jwks !== undefined ||
    options.jwksFile !== undefined ||
    options.jwksUrl !== undefined;
  const envKey = explicit ? undefined : readEnv("JWT_VERIFICATION_KEY");
  const jwksFile = explicit ? options.jwksFile : readEnv("JWT_JWKS_FILE");

  const verificationKeys = [...(options.verificationKeys ?? (envKey === undefined ? [] : [envKey]))];
  if (options.secretKey !== undefined) {
    logger.warn("jwt-rbac: `secretKey` is deprecated; pass it in `verificationKeys`");
    verificationKeys.push(options.secretKey);
  }
  const normalisedKeys = verificationKeys.map(normalisePem);
  checkKeyShapes(normalisedKeys, algorithms);

  const jwks: JWK[] = [];
  if (options.jwks !== undefined) jwks.push(...parseJwks(options.jwks, "jwks"));
  if (jwksFile !== undefined)
    jwks.push(...parseJwks(platform.readJwksFile(jwksFile), `JWKS file "${jwksFile}"`));

  let jwksUrl: URL | undefined;
  if (options.jwksUrl !== undefined) {
    try {
      jwksUrl = new URL(options.jwksUrl);
    } catch {
      throw new JwtRbacConfigError(`jwksUrl "${options.jwksUrl}" is not a URL`);
    }
    const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(jwksUrl.hostname);
    if (jwksUrl.protocol !== "https:" && !(jwksUrl.protocol === "http:" && loopback)) {
      throw new JwtRbacConfigError("jwksUrl must use https (plain http is accepted only on loopback)");
    }
  }

  if (validate && normalisedKeys.length === 0 && jwks.length === 0 && jwksUrl === undefined) {
    throw new JwtRbacConfigError(
      "no verification key: pass verificationKeys, jwks, jwksFile or jwksUrl, or set JWT_VERIFICATION_KEY or JWT_JWKS_FILE",
    );
  }
  if (!validate) {
    logger.warn(
      "jwt-rbac: validate is false — tokens are NOT verified. Never use this outside local development",
    );
  }

  const tokenSource = options.tokenSource ?? TokenSource.HEADER;
  if (!TOKEN_SOURCES.has(tokenSource)) throw new JwtRbacConfigError(`unknown tokenSource "${tokenSource}"`);
  const tokenHeaderKey = options.tokenHeaderKey ?? "Authorization";
  if (!HEADER_NAME.test(tokenHeaderKey))
    throw new JwtRbacConfigError(`tokenHeaderKey "${tokenHeaderKey}" is not a header name`);

  const verifyAudience = options.verifyAudience ?? false;
  const audience = toSet(options.audience ?? options.platformId);
  if (verifyAudience && (audience === undefined || audience.size === 0)) {
    throw new JwtRbacConfigError("verifyAudience needs `audience` or `platformId`");
  }
  const issuer = toSet(options.issuer);
  if (issuer !== undefined && issuer.size === 0) throw new JwtRbacConfigError("issuer must not be empty");

  const clockTolerance = options.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE;
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw new JwtRbacConfigError("clockTolerance must be a non-negative number of seconds");
  }
  // Fail closed: a route nobody mapped is refused, unless the application opts into "allow".
  const unmappedRoutes = options.unmappedRoutes ?? "deny";
  if (unmappedRoutes !== "allow" && unmappedRoutes !== "deny") {
    throw new JwtRbacConfigError('unmappedRoutes must be "allow" or "deny"');
  }
  const adminScope = options.adminScope ?? DEFAULT_ADMIN_SCOPE;
  if (adminScope.trim() === "") throw new JwtRbacConfigError("adminScope must not be empty");

  return {
    algorithms,
    verificationKeys: normalisedKeys,
    jwks,
    jwksUrl,
    validate,
    authorization: options.authorization ?? options.scopeMappings !== undefined,
    tokenSource,
    allowedOrigins: resolveOrigins(options.allowedOrigins),
    tokenHeaderKey: tokenHeaderKey.toLowerCase(),
    tokenHeaderName: tokenHeaderKey,
    cookieName: options.cookieName ?? "access_token",
    scopesClaim: options.scopesClaim ?? "scopes",
    userIdClaim: options.userIdClaim ?? "sub",
    sessionIdClaim: options.sessionIdClaim ?? "session_id",
    audienceClaim: options.audienceClaim ?? "aud",
    audience: verifyAudience ? audience : undefined,
    issuer,
    clockTolerance,
    dependenciesClaims: options.dependenciesClaims ?? [],
    sessionStateClaims: options.sessionStateClaims ?? [],
    scopeMappings: resolveMappings(options.scopeMappings, adminScope),
    excludedRoutePaths: options.excludedRoutePaths ?? DEFAULT_EXCLUDED_ROUTE_PATHS,
    adminScope,
    unmappedRoutes,
    cache: resolveCache(options.cache),
    logger,
    caseSensitiveRoutes: options.caseSensitiveRoutes ?? true,
    maxTokenLength: positiveInteger(options.maxTokenLength ?? DEFAULT_MAX_TOKEN_LENGTH, "maxTokenLength"),
  };
}
