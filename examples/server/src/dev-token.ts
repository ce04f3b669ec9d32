import { parseArgs } from "node:util";
import { ConfigError } from "@agent-platform/common";
import { parseScope } from "@agent-platform/jwt-rbac";
import { hasJwtKey, loadConfig } from "./config.js";
import { devTokenAudience, loadOrCreateDevKey, signDevToken } from "./dev-key.js";

/**
 * `pnpm dev-token --scopes config:read,agents:read [--sub alice] [--ttl 1h]` at the repository root: a
 * development token signed with the development key of the data directory `pnpm start` uses (same
 * environment, same `PLATFORM_DATA_DIR`), printed alone on stdout so it can be captured:
 * `TOKEN=$(pnpm dev-token --scopes config:read)`. Refused where the server would not accept it.
 *
 * Not `pnpm token`: pnpm hands `token` to `npm token` (registry access tokens) before looking at scripts.
 */

const USAGE = "usage: pnpm dev-token --scopes <scope>[,<scope>...] [--sub <subject>] [--ttl <n>s|m|h|d]";
const TTL_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };
// Development tokens are for trying things out; a month is plenty and bounds what a leaked one is worth.
const MAX_TTL_S = 30 * 86_400;

class UsageError extends Error {}

function parseTtl(text: string): number {
  const match = /^(\d{1,7})([smhd])$/.exec(text);
  const seconds = match === null ? 0 : Number(match[1]) * (TTL_UNITS[match[2] as string] as number);
  if (seconds <= 0 || seconds > MAX_TTL_S) {
    throw new UsageError(`--ttl must be a positive number of s, m, h or d, at most 30d (got '${text}')`);
  }
  return seconds;
}

function parseScopes(text: string): string[] {
  const scopes = text
    .split(",")
    .map((scope) => scope.trim())
    .filter((scope) => scope !== "");
  if (scopes.length === 0) throw new UsageError("--scopes must name at least one scope");
  // jwt-rbac's own scope grammar: what the server would parse out of the token.
  const bad = scopes.filter((scope) => parseScope(scope) === undefined);
  if (bad.length > 0) {
    throw new UsageError(
      `not a scope of the form resource:action or resource:<id>:action: ${bad.join(", ")}`,
    );
  }
  return scopes;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { scopes: { type: "string" }, sub: { type: "string" }, ttl: { type: "string" } },
    strict: true,
    allowPositionals: false,
  });
  if (values.scopes === undefined) throw new UsageError("--scopes is required");
  const scopes = parseScopes(values.scopes);
  const subject = values.sub ?? "dev-user";
  if (!/^[\x21-\x7e]{1,128}$/.test(subject)) throw new UsageError("--sub must be 1-128 printable characters");
  const ttlSeconds = parseTtl(values.ttl ?? "1h");

  const config = loadConfig();
  if (config.env === "production") {
    throw new UsageError("refused: PLATFORM_ENV=production. Development tokens are for development only.");
  }
  if (hasJwtKey(config.jwt)) {
    throw new UsageError(
      "refused: a JWT key is configured (JWT_VERIFICATION_KEY, JWT_JWKS_FILE or JWT_JWKS_URL), so the server does not accept development tokens. Get a token from your identity provider.",
    );
  }
  const key = await loadOrCreateDevKey(config.dataDir);
  const { token } = await signDevToken(key, { ...devTokenAudience(config), scopes, subject, ttlSeconds });
  process.stdout.write(`${token}\n`);
}

main().catch((error: unknown) => {
  const message =
    error instanceof UsageError || error instanceof ConfigError || error instanceof TypeError
      ? error.message
      : String(error);
  process.stderr.write(`pnpm dev-token: ${message}\n${error instanceof UsageError ? "" : `${USAGE}\n`}`);
  process.exit(1);
});
