import { configError } from "@agent-platform/common/internal";
import { positiveInteger, toSet } from "../../checks.js";
import {
  type CacheOptions,
  DEFAULT_CACHE,
  DEFAULT_CLOCK_TOLERANCE,
  type JwtAlgorithm,
  type JwtRbacOptions,
} from "../../options.js";
import { isSupportedAlgorithm } from "./algorithms.js";

// What verifying a token is configured with: algorithms, audience, `typ`, clock tolerance, the verified-token cache.

/** The accepted algorithms (`algorithms`, or `algorithm` as sugar for a list of one; default RS256). */
export function topLevelAlgorithms(options: JwtRbacOptions): JwtAlgorithm[] {
  return resolveAlgorithms(options.algorithms ?? [options.algorithm ?? "RS256"], "algorithms");
}

/** Leeway for `exp`, `nbf` and `iat`, in seconds. */
export function resolveClockTolerance(given: number | undefined): number {
  const clockTolerance = given ?? DEFAULT_CLOCK_TOLERANCE;
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw configError("jwt-rbac", "clockTolerance must be a non-negative number of seconds");
  }
  return clockTolerance;
}

/** A list of algorithm names, each supported, without repeats. */
export function resolveAlgorithms(given: readonly string[], option: string): JwtAlgorithm[] {
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

/** The verified-token cache, or `false`. */
export function resolveCache(cache: JwtRbacOptions["cache"]): CacheOptions | false {
  if (cache === false) return false;
  const resolved = { ...DEFAULT_CACHE, ...cache };
  positiveInteger(resolved.max, "cache.max");
  positiveInteger(resolved.ttlMs, "cache.ttlMs");
  return resolved;
}

/** The expected audience: `audience`, else `platformId` under `verifyAudience`, else none. */
export function resolveAudience(options: JwtRbacOptions): ReadonlySet<string> | undefined {
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

/** A media type's subtype as RFC 6838 §4.2 allows it (`at+jwt`), optionally with `application/`. */
export function resolveTyp(typ: string | undefined): string | undefined {
  if (typ === undefined) return undefined;
  if (typeof typ !== "string" || !/^(application\/)?[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/.test(typ)) {
    throw configError("jwt-rbac", `requireTyp "${String(typ)}" is not a media type such as "at+jwt"`);
  }
  return typ.toLowerCase().replace(/^application\//, "");
}
