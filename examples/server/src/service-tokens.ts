import { createHash } from "node:crypto";
import type { TokenVerifierHook } from "@agent-platform/jwt-rbac";
import { z } from "zod";
import { envText } from "./env-vars.js";

/** One service account: its name, the SHA-256 (hex) of its token, and the scopes the token grants. */
export interface ServiceToken {
  readonly name: string;
  readonly sha256: string;
  readonly scopes: readonly string[];
}

const serviceTokenSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "a lower-case name of at most 64 characters"),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "64 lower-case hex digits (sha256sum of the token)"),
    scopes: z.array(z.string().regex(/^\S+$/, "a scope without whitespace")).max(100),
  })
  .strict();

/**
 * `PLATFORM_SERVICE_TOKENS`: a JSON array of `{ "name", "sha256", "scopes" }`. Only hashes are
 * configured, so the environment never holds a usable token.
 */
export const envServiceTokens = envText.transform((value, ctx): ServiceToken[] => {
  if (value === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    ctx.addIssue({
      code: "custom",
      message: 'not JSON: give [{"name":"ci","sha256":"<hex>","scopes":["agents:read"]}]',
    });
    return [];
  }
  const result = z.array(serviceTokenSchema).max(1000).safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    ctx.addIssue({ code: "custom", message: `entry ${issue?.path.join(".")}: ${issue?.message}` });
    return [];
  }
  const seen = new Set<string>();
  for (const token of result.data) {
    if (seen.has(token.name) || seen.has(token.sha256)) {
      ctx.addIssue({
        code: "custom",
        message: `service account '${token.name}' or its hash is listed twice`,
      });
    }
    seen.add(token.name).add(token.sha256);
  }
  return result.data;
});

/**
 * The platform's service accounts as a jwt-rbac `tokenVerifier`: a presented opaque token is hashed and
 * looked up; its account becomes `sub` `service:<name>` with the configured scopes under `scopesClaim`.
 * A hash lookup, not a string comparison of secrets, so nothing about a token leaks through timing.
 */
export function serviceTokenVerifier(
  tokens: readonly ServiceToken[],
  scopesClaim: string,
): TokenVerifierHook {
  const byHash = new Map(tokens.map((token) => [token.sha256, token]));
  return (token) => {
    const account = byHash.get(createHash("sha256").update(token).digest("hex"));
    if (account === undefined) return null;
    return {
      sub: `service:${account.name}`,
      service_account: account.name,
      [scopesClaim]: [...account.scopes],
    };
  };
}
