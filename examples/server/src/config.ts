import { resolve } from "node:path";
import { type JwtAlgorithm, SUPPORTED_ALGORITHMS } from "@agent-platform/jwt-rbac";
import { z } from "zod";

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
  /** PEM, JWK JSON or HS* secret; `\n` escapes are turned into newlines so a PEM fits in one env line. */
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
  /** Origins allowed to send cookie-authenticated unsafe requests; undefined: the request's own. */
  readonly allowedOrigins: string[] | undefined;
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
  readonly messaging: MessagingConfig;
}

export class ConfigError extends Error {
  readonly code = "INVALID_CONFIG";
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const optionalText = z
  .string()
  .transform((value) => value.trim())
  .optional()
  .transform((value) => (value === undefined || value === "" ? undefined : value));

const booleanText = (fallback: boolean) =>
  optionalText.pipe(
    z
      .enum(["true", "false", "1", "0", "yes", "no", "on", "off"], {
        error: "expected one of true, false, 1, 0, yes, no, on, off",
      })
      .optional()
      .transform((value) => (value === undefined ? fallback : ["true", "1", "yes", "on"].includes(value))),
  );

const integerText = (fallback: number, min: number, max: number) =>
  optionalText.pipe(
    z
      .string()
      .regex(/^\d+$/, { error: "expected a whole number" })
      .transform(Number)
      .pipe(z.number().int().min(min).max(max))
      .optional()
      .transform((value) => value ?? fallback),
  );

const commaList = optionalText.transform((value) =>
  value === undefined
    ? undefined
    : value
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== ""),
);

function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "postgres:" || url.protocol === "postgresql:";
  } catch {
    return false;
  }
}

const postgresUrl = optionalText.pipe(
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
const databasesList = optionalText.transform((value, ctx): DatabaseConfig[] | undefined => {
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

const optionalHttpUrl = optionalText.pipe(
  z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }).optional(),
);
const httpUrl = (fallback: string) => optionalHttpUrl.transform((value) => value ?? fallback);

/**
 * The messaging channels' variables, parsed by the same rules as every other variable (empty = unset,
 * whole numbers only, the same booleans); the server maps them to the package's options in
 * src/messaging/. Every channel is optional: without its credentials it is simply not mounted.
 */
export const messagingConfigSchema = z.object({
  WHATSAPP_VERIFY_TOKEN: optionalText,
  WHATSAPP_APP_SECRET: optionalText,
  WHATSAPP_ACCESS_TOKEN: optionalText,
  WHATSAPP_PHONE_NUMBER_ID: optionalText,
  WHATSAPP_API_BASE_URL: httpUrl("https://graph.facebook.com/v25.0"),
  WHATSAPP_SKIP_SIGNATURE_VALIDATION: booleanText(false),
  WHATSAPP_API_TIMEOUT_MS: integerText(10_000, 0, 86_400_000),
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_BOT_TOKEN: optionalText,
  SLACK_API_BASE_URL: httpUrl("https://slack.com/api"),
  SLACK_API_TIMEOUT_MS: integerText(10_000, 0, 86_400_000),
  TELEGRAM_BOT_TOKEN: optionalText,
  TELEGRAM_WEBHOOK_SECRET_TOKEN: optionalText,
  TELEGRAM_API_BASE_URL: httpUrl("https://api.telegram.org"),
  TELEGRAM_API_TIMEOUT_MS: integerText(10_000, 0, 86_400_000),
  AGENT_URL: optionalHttpUrl,
  AGENT_TIMEOUT_MS: integerText(30_000, 0, 86_400_000),
  MESSAGING_WORKER_CONCURRENCY: integerText(4, 1, 64),
  // At least 10 ms: 0 would make every worker poll the database in a busy loop.
  MESSAGING_WORKER_POLL_MS: integerText(1_000, 10, 86_400_000),
  MESSAGING_WORKER_START_DELAY_MS: integerText(0, 0, 86_400_000),
  MESSAGING_MAX_ATTEMPTS: integerText(8, 1, 100),
  MESSAGING_RETRY_BASE_MS: integerText(2_000, 0, 86_400_000),
  MESSAGING_RETRY_MAX_MS: integerText(300_000, 0, 86_400_000),
  MESSAGING_VISIBILITY_TIMEOUT_MS: integerText(180_000, 1_000, 86_400_000),
  // Messages per shared commit on the acknowledgement path; 1 gives every delivery a commit of its own.
  MESSAGING_COMMIT_MAX_BATCH: integerText(256, 1, 5_000),
  // Longest a delivery waits for its commit to start before it is refused with 503 (nothing stored).
  MESSAGING_COMMIT_MAX_WAIT_MS: integerText(2_000, 1, 60_000),
});

export type MessagingConfig = z.output<typeof messagingConfigSchema>;

const serverEnvSchema = z.object({
  HOST: optionalText.transform((value) => value ?? "127.0.0.1"),
  PORT: integerText(7777, 0, 65535),
  PLATFORM_DATA_DIR: optionalText.transform((value) => resolve(value ?? "./.data")),
  PLATFORM_ENV: optionalText.pipe(
    z.enum(["development", "test", "production"]).optional().default("development"),
  ),
  LOG_LEVEL: optionalText.pipe(
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional().default("info"),
  ),
  DATABASE_URL: postgresUrl,
  DATABASES: databasesList,
  PLATFORM_ID: optionalText.transform((value) => value ?? "agent-platform"),
  JWT_VERIFICATION_KEY: optionalText.transform((value) => value?.replaceAll("\\n", "\n")),
  JWT_JWKS_FILE: optionalText,
  JWT_JWKS_URL: optionalHttpUrl,
  JWT_ALGORITHM: optionalText.pipe(z.enum(SUPPORTED_ALGORITHMS).optional()),
  JWT_AUDIENCE: commaList,
  JWT_VERIFY_AUDIENCE: booleanText(false),
  JWT_ISSUER: commaList,
  JWT_ALLOWED_ORIGINS: commaList,
  JWT_AUTHORIZATION: booleanText(true),
  JWT_TOKEN_SOURCE: optionalText.pipe(
    z
      .string()
      .transform((value) => value.toLowerCase())
      .pipe(z.enum(["header", "cookie", "both"]))
      .optional()
      .default("header"),
  ),
  JWT_COOKIE_NAME: optionalText,
  SHUTDOWN_TIMEOUT_MS: integerText(10_000, 0, 600_000),
});

/** Redacts the password of a database URL so an error message never carries a secret. */
export function redactUrl(value: string): string {
  return value.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@");
}

function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const variable = issue.path[0];
    return variable === undefined ? issue.message : `${String(variable)}: ${issue.message}`;
  });
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Parses and validates the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env): ServerConfig {
  const server = serverEnvSchema.safeParse(env);
  const messaging = messagingConfigSchema.safeParse(env);
  const problems = [
    ...(server.success ? [] : describeIssues(server.error)),
    ...(messaging.success ? [] : describeIssues(messaging.error)),
  ];
  if (!server.success || !messaging.success) throw new ConfigError(problems);
  const vars = server.data;

  const databases: DatabaseConfig[] = [];
  if (vars.DATABASE_URL !== undefined) databases.push({ id: "default", url: vars.DATABASE_URL });
  for (const database of vars.DATABASES ?? []) {
    if (database.id === "default" && vars.DATABASE_URL !== undefined) {
      throw new ConfigError(["DATABASES: 'default' is already registered by DATABASE_URL"]);
    }
    databases.push(database);
  }

  return {
    host: vars.HOST,
    port: vars.PORT,
    dataDir: vars.PLATFORM_DATA_DIR,
    env: vars.PLATFORM_ENV,
    logLevel: vars.LOG_LEVEL,
    databases,
    platformId: vars.PLATFORM_ID,
    jwt: {
      verificationKey: vars.JWT_VERIFICATION_KEY,
      jwksFile: vars.JWT_JWKS_FILE,
      jwksUrl: vars.JWT_JWKS_URL,
      algorithm: vars.JWT_ALGORITHM,
      audience: vars.JWT_AUDIENCE,
      verifyAudience: vars.JWT_VERIFY_AUDIENCE,
      issuer: vars.JWT_ISSUER,
      authorization: vars.JWT_AUTHORIZATION,
      tokenSource: vars.JWT_TOKEN_SOURCE,
      cookieName: vars.JWT_COOKIE_NAME,
      allowedOrigins: vars.JWT_ALLOWED_ORIGINS,
    },
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    messaging: messaging.data,
  };
}

export function hasJwtKey(jwt: JwtConfig): boolean {
  return jwt.verificationKey !== undefined || jwt.jwksFile !== undefined || jwt.jwksUrl !== undefined;
}
