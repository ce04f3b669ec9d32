import { resolve } from "node:path";
import { ConfigError } from "@agent-platform/common";
import { type JwtAlgorithm, keySourcesFromEnv, SUPPORTED_ALGORITHMS } from "@agent-platform/jwt-rbac";
import { DEFAULT_RETRY, MAX_RETRY_ATTEMPTS, MAX_RETRY_WAIT_MS } from "@agent-platform/migrator";
import { z } from "zod";
import { describeEnvIssues, envBoolean, envEnum, envInteger, envList, envText, envUrl } from "./env-vars.js";
import { messagingConfigSchema } from "./messaging/config.js";
import { envServiceTokens, type ServiceToken } from "./service-tokens.js";

/** Ids are path segments and log fields; `all` is the route that migrates every database. */
export const DATABASE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const RESERVED_DATABASE_IDS = new Set(["all"]);

export type PlatformEnv = "development" | "test" | "production";
export type TokenSourceName = "header" | "cookie" | "both";

export interface DatabaseConfig {
  readonly id: string;
  readonly url: string;
}

export interface JwtConfig {
  /** PEM, JWK JSON or HS* secret, as given; jwt-rbac unescapes `\n` in PEM text only. */
  readonly verificationKey: string | undefined;
  readonly jwksFile: string | undefined;
  readonly jwksUrl: string | undefined;
  readonly algorithm: JwtAlgorithm | undefined;
  readonly audience: string[] | undefined;
  readonly verifyAudience: boolean;
  readonly issuer: string[] | undefined;
  readonly authorization: boolean;
  readonly tokenSource: TokenSourceName;
  readonly cookieName: string | undefined;
  readonly scopesClaim: string | undefined;
  readonly userIdClaim: string | undefined;
  /** The server's public base URL: the RFC 9728 `resource`, and where its metadata is announced. */
  readonly publicUrl: string | undefined;
  /** Origins allowed to send cookie-authenticated unsafe requests; undefined: the request's own. */
  readonly allowedOrigins: string[] | undefined;
  /** Service accounts' opaque tokens (`PLATFORM_SERVICE_TOKENS`), by hash. */
  readonly serviceTokens: readonly ServiceToken[];
  /** DPoP (`JWT_DPOP`): off, allowed beside bearer tokens, or required. */
  readonly dpop: "off" | "allowed" | "required";
  /** `JWT_DPOP_NONCE_SECRET`: server nonces, the same secret on every replica. */
  readonly dpopNonceSecret: string | undefined;
}

export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly env: PlatformEnv;
  readonly logLevel: string;
  /** Empty: one embedded database with id `default`. */
  readonly databases: readonly DatabaseConfig[];
  readonly platformId: string;
  readonly jwt: JwtConfig;
  readonly shutdownTimeoutMs: number;
  /** `REQUEST_TIMEOUT_MS`: a request's headers, and a webhook's whole body, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** The migrator's retries of lock timeouts and failed concurrent index builds (its `retry` option). */
  readonly migrateRetry: { readonly attempts: number; readonly maxMs: number };
  readonly messaging: z.output<typeof messagingConfigSchema>;
  /** Browser origins (exact) whose pages may call the API and read its answers; `["*"]`: any; empty: none. */
  readonly corsAllowedOrigins: readonly string[];
  /** `AUDIT_LOG`: which access decisions are logged (`access.denied` lines always; `access.allowed` too with `all`). */
  readonly auditLog: "denied" | "all";
  /** `service.name` of the spans when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (tracing on); undefined: no tracing. */
  readonly tracing: { readonly serviceName: string } | undefined;
  /** `METRICS_PORT` / `METRICS_HOST`: the Prometheus listener; undefined: no metrics. */
  readonly metrics: { readonly host: string; readonly port: number } | undefined;
}

/**
 * An environment the server cannot start with: the platform's one `ConfigError` (the packages throw it
 * too), with the server as its component and every problem listed, each on its own line.
 */
export function invalidEnv(problems: readonly string[], option?: string): ConfigError {
  const message = `Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
  return new ConfigError(message, { component: "server", problems, option });
}

function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "postgres:" || url.protocol === "postgresql:";
  } catch {
    return false;
  }
}

const postgresUrl = envText.pipe(
  z.string().refine(isPostgresUrl, { error: "expected a postgres:// or postgresql:// URL" }).optional(),
);

function checkDatabaseId(id: string): string | undefined {
  if (!DATABASE_ID_PATTERN.test(id)) {
    return `database id '${id}' must be 1-63 letters, digits, '_' or '-', starting with a letter or digit`;
  }
  if (RESERVED_DATABASE_IDS.has(id)) return `database id '${id}' is reserved`;
  return undefined;
}

/** `id=url,id2=url2`; the url may itself contain `=` (query string), so only the first `=` splits. */
const databasesList = envText.transform((value, ctx): DatabaseConfig[] | undefined => {
  if (value === undefined) return undefined;
  const databases: DatabaseConfig[] = [];
  for (const entry of value.split(",")) {
    const trimmed = entry.trim();
    if (trimmed === "") continue;
    const separator = trimmed.indexOf("=");
    const id = separator === -1 ? "" : trimmed.slice(0, separator).trim();
    const url = separator === -1 ? "" : trimmed.slice(separator + 1).trim();
    if (id === "" || url === "") {
      ctx.addIssue({ code: "custom", message: `entry '${redactUrl(trimmed)}' is not of the form id=url` });
      continue;
    }
    const idProblem = checkDatabaseId(id);
    if (idProblem !== undefined) ctx.addIssue({ code: "custom", message: idProblem });
    else if (databases.some((database) => database.id === id)) {
      ctx.addIssue({ code: "custom", message: `database id '${id}' is given twice` });
    } else if (!isPostgresUrl(url)) {
      ctx.addIssue({
        code: "custom",
        message: `the url of '${id}' is not a postgres:// or postgresql:// URL`,
      });
    } else databases.push({ id, url });
  }
  if (databases.length === 0 && ctx.issues.length === 0) {
    ctx.addIssue({ code: "custom", message: "no database given" });
  }
  return databases;
});

/**
 * An origin as a browser sends it in `Origin`: `scheme://host[:port]`, lower case, default port
 * omitted, no path, no trailing slash. Compared exactly, so a spelling a browser never sends would
 * silently match nothing: it is refused with the form to write instead.
 */
function corsOriginProblem(value: string): string | undefined {
  if (value === "*") return undefined;
  if (value.includes("*"))
    return `'${value}': an origin has no wildcard; list each origin (or '*' alone for any)`;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return `'${value}' is not an http(s) origin (write scheme://host[:port], e.g. https://app.example.com)`;
  }
  if (url.origin !== value) {
    return `'${value}' is not an exact origin: write '${url.origin}' (no path, no trailing slash, lower case, no default port)`;
  }
  return undefined;
}

const corsOrigins = envList.transform((origins, ctx): string[] => {
  for (const origin of origins ?? []) {
    const problem = corsOriginProblem(origin);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  }
  if (origins?.includes("*") && origins.length > 1) {
    ctx.addIssue({
      code: "custom",
      message: "'*' (any origin) stands alone: list exact origins or '*' only",
    });
  }
  return [...new Set(origins ?? [])];
});

const serverEnvSchema = z.object({
  HOST: envText.transform((value) => value ?? "127.0.0.1"),
  PORT: envInteger(7777, { min: 0, max: 65535 }),
  PLATFORM_DATA_DIR: envText.transform((value) => resolve(value ?? "./.data")),
  PLATFORM_ENV: envEnum(["development", "test", "production"], "development"),
  LOG_LEVEL: envEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], "info"),
  DATABASE_URL: postgresUrl,
  DATABASES: databasesList,
  PLATFORM_ID: envText.transform((value) => value ?? "agent-platform"),
  JWT_JWKS_URL: envUrl(),
  JWT_ALGORITHM: envText.pipe(z.enum(SUPPORTED_ALGORITHMS).optional()),
  JWT_AUDIENCE: envList,
  JWT_VERIFY_AUDIENCE: envBoolean(false),
  JWT_ISSUER: envList,
  JWT_ALLOWED_ORIGINS: envList,
  JWT_AUTHORIZATION: envBoolean(true),
  JWT_TOKEN_SOURCE: envEnum(["header", "cookie", "both"], "header"),
  JWT_COOKIE_NAME: envText,
  JWT_SCOPES_CLAIM: envText,
  JWT_USER_ID_CLAIM: envText,
  JWT_DPOP: envEnum(["off", "allowed", "required"], "off"),
  JWT_DPOP_NONCE_SECRET: envText,
  PLATFORM_SERVICE_TOKENS: envServiceTokens,
  PUBLIC_URL: envUrl().transform((value) => value?.replace(/\/+$/, "")),
  SHUTDOWN_TIMEOUT_MS: envInteger(10_000, { min: 0, max: 600_000 }),
  REQUEST_TIMEOUT_MS: envInteger(10_000, { min: 1_000, max: 300_000 }),
  CORS_ALLOWED_ORIGINS: corsOrigins,
  MIGRATE_RETRY_ATTEMPTS: envInteger(DEFAULT_RETRY.attempts, { min: 1, max: MAX_RETRY_ATTEMPTS }),
  MIGRATE_RETRY_MAX_MS: envInteger(DEFAULT_RETRY.maxMs, { min: 0, max: MAX_RETRY_WAIT_MS }),
  AUDIT_LOG: envEnum(["denied", "all"], "denied"),
  METRICS_PORT: envInteger(-1, { min: 0, max: 65535 }),
  METRICS_HOST: envText.transform((value) => value ?? "127.0.0.1"),
  // Read by the OpenTelemetry SDK itself; the server only needs to know whether to start it.
  OTEL_EXPORTER_OTLP_ENDPOINT: envText,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envText,
  OTEL_SERVICE_NAME: envText,
});

/** Redacts the password of a database URL so an error message never carries a secret. */
export function redactUrl(value: string): string {
  return value.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@");
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Parses and validates the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env): ServerConfig {
  const server = serverEnvSchema.safeParse(env);
  const messaging = messagingConfigSchema.safeParse(env);
  const problems = [
    ...(server.success ? [] : describeEnvIssues(server.error)),
    ...(messaging.success ? [] : describeEnvIssues(messaging.error)),
  ];
  if (!server.success || !messaging.success) throw invalidEnv(problems);
  const vars = server.data;
  const jwtKeys = keySourcesFromEnv(env);

  const databases: DatabaseConfig[] = [];
  if (vars.DATABASE_URL !== undefined) databases.push({ id: "default", url: vars.DATABASE_URL });
  for (const database of vars.DATABASES ?? []) {
    if (database.id === "default" && vars.DATABASE_URL !== undefined) {
      throw invalidEnv(["DATABASES: 'default' is already registered by DATABASE_URL"], "DATABASES");
    }
    databases.push(database);
  }
  if (vars.CORS_ALLOWED_ORIGINS.includes("*") && vars.JWT_TOKEN_SOURCE !== "header") {
    throw invalidEnv(
      [
        `CORS_ALLOWED_ORIGINS: '*' cannot be used with JWT_TOKEN_SOURCE=${vars.JWT_TOKEN_SOURCE} (a page of any site could send the cookie and read the answer): list the UI's exact origins`,
      ],
      "CORS_ALLOWED_ORIGINS",
    );
  }

  const dpopProblem = dpopConfigProblem(
    vars.JWT_DPOP,
    vars.PLATFORM_ENV,
    vars.PUBLIC_URL,
    vars.PLATFORM_SERVICE_TOKENS,
  );
  if (dpopProblem !== undefined) throw invalidEnv([dpopProblem[1]], dpopProblem[0]);

  return {
    host: vars.HOST,
    port: vars.PORT,
    dataDir: vars.PLATFORM_DATA_DIR,
    env: vars.PLATFORM_ENV,
    logLevel: vars.LOG_LEVEL,
    databases,
    platformId: vars.PLATFORM_ID,
    jwt: {
      // Read by jwt-rbac's own rule (an HS* secret containing the two characters `\n` reaches it unchanged).
      verificationKey: jwtKeys.verificationKeys?.[0],
      jwksFile: jwtKeys.jwksFile,
      jwksUrl: vars.JWT_JWKS_URL,
      algorithm: vars.JWT_ALGORITHM,
      audience: vars.JWT_AUDIENCE,
      verifyAudience: vars.JWT_VERIFY_AUDIENCE,
      issuer: vars.JWT_ISSUER,
      authorization: vars.JWT_AUTHORIZATION,
      tokenSource: vars.JWT_TOKEN_SOURCE,
      cookieName: vars.JWT_COOKIE_NAME,
      scopesClaim: vars.JWT_SCOPES_CLAIM,
      userIdClaim: vars.JWT_USER_ID_CLAIM,
      publicUrl: vars.PUBLIC_URL,
      allowedOrigins: vars.JWT_ALLOWED_ORIGINS,
      serviceTokens: vars.PLATFORM_SERVICE_TOKENS,
      dpop: vars.JWT_DPOP,
      dpopNonceSecret: vars.JWT_DPOP_NONCE_SECRET,
    },
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: vars.REQUEST_TIMEOUT_MS,
    migrateRetry: { attempts: vars.MIGRATE_RETRY_ATTEMPTS, maxMs: vars.MIGRATE_RETRY_MAX_MS },
    messaging: messaging.data,
    corsAllowedOrigins: vars.CORS_ALLOWED_ORIGINS,
    auditLog: vars.AUDIT_LOG,
    tracing:
      vars.OTEL_EXPORTER_OTLP_ENDPOINT === undefined && vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT === undefined
        ? undefined
        : { serviceName: vars.OTEL_SERVICE_NAME ?? "agent-platform-server" },
    metrics: vars.METRICS_PORT < 0 ? undefined : { host: vars.METRICS_HOST, port: vars.METRICS_PORT },
  };
}

/**
 * What JWT_DPOP cannot be combined with, as `[variable, one line naming the fix]`: a proof names the URL the client
 * called, so the server must know its public origin (PUBLIC_URL, an origin: a proxy that strips a path prefix would
 * make every proof name another path); in production, without it, a Host header the client chose would decide.
 * `required` refuses every bearer token, and service-account tokens are bearer tokens: refused at startup rather
 * than on every call.
 */
function dpopConfigProblem(
  dpop: "off" | "allowed" | "required",
  env: PlatformEnv,
  publicUrl: string | undefined,
  serviceTokens: readonly unknown[],
): [string, string] | undefined {
  if (dpop === "off") return undefined;
  if (publicUrl !== undefined && new URL(publicUrl).pathname !== "/") {
    return [
      "PUBLIC_URL",
      `PUBLIC_URL: DPoP proofs name this server's origin, so with JWT_DPOP=${dpop} PUBLIC_URL must be an origin without a path (https://api.example.com), the API served at its root`,
    ];
  }
  if (publicUrl === undefined && env === "production") {
    return [
      "PUBLIC_URL",
      `JWT_DPOP=${dpop} with PLATFORM_ENV=production requires PUBLIC_URL (the origin clients call, https://api.example.com): without it a Host header the client chose decides the URL a DPoP proof must name`,
    ];
  }
  if (dpop === "required" && serviceTokens.length > 0) {
    return [
      "PLATFORM_SERVICE_TOKENS",
      "PLATFORM_SERVICE_TOKENS: service-account tokens are bearer tokens, which JWT_DPOP=required refuses: set JWT_DPOP=allowed to accept them beside DPoP-bound tokens, or remove PLATFORM_SERVICE_TOKENS",
    ];
  }
  return undefined;
}

export function hasJwtKey(jwt: JwtConfig): boolean {
  return jwt.verificationKey !== undefined || jwt.jwksFile !== undefined || jwt.jwksUrl !== undefined;
}
