import type { Logger } from "@agent-platform/common";
import { configError } from "@agent-platform/common/internal";
import type { JWK } from "jose";
import { nonNegativeNumber, positiveInteger, toSet } from "../../checks.js";
import { keySourcesFromEnv } from "../../env.js";
import {
  DEFAULT_REMOTE_KEYS,
  type IssuerOptions,
  type JwtAlgorithm,
  type JwtRbacOptions,
  MAX_REMOTE_KEYS_AGE_MS,
} from "../../options.js";
import type { ClaimRules } from "../verify/claims.js";
import { resolveAlgorithms } from "../verify/config.js";
import type { Runtime } from "../verify/signature-types.js";
import { isAllowedRemoteUrl } from "./fetch-json.js";
import { checkKeyShapes, type KeySources, normalisePem, parseJwks } from "./keys.js";
import type { RemoteKeysSettings } from "./remote-jwks.js";

// Where the keys come from: one issuer's key sources (top-level options, an `issuers` entry), remote key fetching.

/** One trusted issuer (or, without `issuers`, the top-level options): its keys and claim rules. */
export interface IssuerConfig extends KeySources, ClaimRules {
  /** How messages name it: `issuers[1]`, or `jwksUrl` / `issuer` for the top-level options. */
  readonly option: string;
  readonly jwksUrl: URL | undefined;
  /** The issuer whose discovery document gives the JWKS URL. */
  readonly discoveryIssuer: string | undefined;
}

/** An https URL (http on loopback), or a ConfigError naming the option. */
export function remoteUrl(value: string, option: string): URL {
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

/** `remoteKeys` with its defaults. */
export function resolveRemoteKeys(options: JwtRbacOptions["remoteKeys"]): RemoteKeysSettings {
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

/** The top-level options that name keys or the issuer: `issuers` excludes them. */
export const TOP_LEVEL_KEY_OPTIONS = [
  "verificationKeys",
  "secretKey",
  "jwks",
  "jwksFile",
  "jwksUrl",
  "discovery",
  "issuer",
] as const;

/** One `issuers` entry (listed, from a template, or from the resolver) as an IssuerConfig. */
export function resolveIssuerEntry(
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

/** Without `issuers`: the one issuer of the top-level key options (or of the environment, when none is given). */
export function resolveTopLevelIssuer(
  options: JwtRbacOptions,
  runtime: Runtime,
  logger: Logger,
  rules: Omit<ClaimRules, "issuer" | "audience">,
  audience: ReadonlySet<string> | undefined,
  algorithms: readonly JwtAlgorithm[],
  validate: boolean,
): IssuerConfig {
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
  return { ...rules, ...keys, option, algorithms, issuer, audience };
}
