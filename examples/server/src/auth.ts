import { type JwtRbacOptions, PLATFORM_POLICY, PostgresReplayStore } from "@agent-platform/jwt-rbac";
import type { Logger } from "pino";
import type { Sql } from "postgres";
import { hasJwtKey, type ServerConfig } from "./config.js";
import { DEV_KEY_ALGORITHM, type DevKey } from "./dev-key.js";
import { DOCS_FILE_PATHS } from "./http/docs.js";
import { READY_PATH } from "./http/routes/ready.js";
import { MESSAGING_ROUTE_POLICY } from "./messaging/index.js";
import { serviceTokenVerifier } from "./service-tokens.js";
import { StartupError } from "./startup-error.js";

/** RFC 9728 protected-resource metadata: public, so MCP clients can find the authorization server. */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers?: readonly string[];
  readonly scopes_supported: readonly string[];
  readonly bearer_methods_supported: readonly string[];
}

/**
 * The metadata document. `resource` is PUBLIC_URL; without it, the origin the request came to (fine for
 * development, but a client checks `resource` against the URL it used, so set PUBLIC_URL in production).
 */
export function protectedResourceMetadata(
  config: ServerConfig,
  requestOrigin: string,
): ProtectedResourceMetadata {
  const { jwt } = config;
  const scopes = new Set<string>([PLATFORM_POLICY.adminScope]);
  for (const required of Object.values({
    ...PLATFORM_POLICY.scopeMappings,
    ...MESSAGING_ROUTE_POLICY.scopeMappings,
  })) {
    for (const scope of required) scopes.add(scope);
  }
  return {
    resource: jwt.publicUrl ?? requestOrigin,
    ...(jwt.issuer === undefined ? {} : { authorization_servers: jwt.issuer }),
    scopes_supported: [...scopes].sort(),
    // RFC 6750 methods: the cookie is not one of them.
    bearer_methods_supported: jwt.tokenSource === "cookie" ? [] : ["header"],
  };
}

/** Security is never silently off: production without a key source refuses to start. */
export function assertKeyConfigured(config: ServerConfig): void {
  if (config.env === "production" && !hasJwtKey(config.jwt)) {
    throw new StartupError(
      "NO_JWT_KEY_IN_PRODUCTION",
      "PLATFORM_ENV=production requires a JWT key: set JWT_VERIFICATION_KEY, JWT_JWKS_FILE or JWT_JWKS_URL. The server generates a development key only outside production.",
    );
  }
}

/** The jwt-rbac options of this server: the configured key source, or the generated development key. */
export function jwtOptions(
  config: ServerConfig,
  devKey: DevKey | undefined,
  logger: Logger,
  sharedSql?: Sql,
): JwtRbacOptions {
  const { jwt } = config;
  const keySource: JwtRbacOptions =
    devKey !== undefined
      ? { verificationKeys: [devKey.publicKeyPem], algorithm: DEV_KEY_ALGORITHM }
      : {
          ...(jwt.verificationKey === undefined ? {} : { verificationKeys: [jwt.verificationKey] }),
          ...(jwt.jwksFile === undefined ? {} : { jwksFile: jwt.jwksFile }),
          ...(jwt.jwksUrl === undefined ? {} : { jwksUrl: jwt.jwksUrl }),
          ...(jwt.algorithm === undefined ? {} : { algorithm: jwt.algorithm }),
        };
  return {
    ...keySource,
    platformId: config.platformId,
    ...(jwt.audience === undefined ? {} : { audience: jwt.audience }),
    verifyAudience: jwt.verifyAudience,
    ...(jwt.issuer === undefined ? {} : { issuer: jwt.issuer }),
    authorization: jwt.authorization,
    tokenSource: jwt.tokenSource,
    ...(jwt.cookieName === undefined ? {} : { cookieName: jwt.cookieName }),
    ...(jwt.scopesClaim === undefined ? {} : { scopesClaim: jwt.scopesClaim }),
    ...(jwt.userIdClaim === undefined ? {} : { userIdClaim: jwt.userIdClaim }),
    ...(jwt.publicUrl === undefined
      ? {}
      : { resourceMetadata: `${jwt.publicUrl}${PROTECTED_RESOURCE_PATH}` }),
    ...(jwt.allowedOrigins === undefined ? {} : { allowedOrigins: jwt.allowedOrigins }),
    // The origin clients call: what a DPoP proof's `htu` names behind a TLS-terminating proxy.
    ...(jwt.publicUrl === undefined ? {} : { publicOrigin: new URL(jwt.publicUrl).origin }),
    // The messaging package names its own routes, so a new channel needs no change here.
    scopeMappings: MESSAGING_ROUTE_POLICY.scopeMappings,
    excludedRoutePaths: [
      ...PLATFORM_POLICY.excludedRoutePaths,
      READY_PATH,
      PROTECTED_RESOURCE_PATH,
      ...DOCS_FILE_PATHS,
      ...MESSAGING_ROUTE_POLICY.excludedPaths,
    ],
    logger: logger.child({ component: "jwt-rbac" }),
    ...(jwt.serviceTokens.length === 0
      ? {}
      : { tokenVerifier: serviceTokenVerifier(jwt.serviceTokens, jwt.scopesClaim ?? "scopes") }),
    ...(jwt.dpop === "off" ? {} : { dpop: dpopOptions(jwt, sharedSql) }),
  };
}

/** DPoP as configured; proofs are remembered in the inbox database when replicas share it. */
function dpopOptions(
  jwt: ServerConfig["jwt"],
  sharedSql: Sql | undefined,
): NonNullable<JwtRbacOptions["dpop"]> {
  return {
    required: jwt.dpop === "required",
    ...(jwt.dpopNonceSecret === undefined ? {} : { nonce: { secret: jwt.dpopNonceSecret } }),
    ...(sharedSql === undefined
      ? {}
      : {
          replay: new PostgresReplayStore({
            query: (text, params) => sharedSql.unsafe(text, params as never[]),
          }),
        }),
  };
}
