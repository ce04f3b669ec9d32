import { DEFAULT_EXCLUDED_ROUTE_PATHS, type JwtRbacOptions } from "@agent-platform/jwt-rbac";
import type { Logger } from "pino";
import { hasJwtKey, type ServerConfig } from "./config.js";
import { DEV_KEY_ALGORITHM, type DevKey } from "./dev-key.js";
import { MESSAGING_ROUTE_POLICY } from "./messaging/index.js";

export class StartupError extends Error {
  constructor(
    readonly code: "NO_JWT_KEY_IN_PRODUCTION" | "PORT_IN_USE",
    message: string,
  ) {
    super(message);
    this.name = "StartupError";
  }
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
export function jwtOptions(config: ServerConfig, devKey: DevKey | undefined, logger: Logger): JwtRbacOptions {
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
    ...(jwt.allowedOrigins === undefined ? {} : { allowedOrigins: jwt.allowedOrigins }),
    // The messaging package names its own routes, so a new channel needs no change here.
    scopeMappings: MESSAGING_ROUTE_POLICY.scopeMappings,
    excludedRoutePaths: [...DEFAULT_EXCLUDED_ROUTE_PATHS, ...MESSAGING_ROUTE_POLICY.excludedPaths],
    logger: { warn: (message) => logger.warn(message), debug: (message) => logger.debug(message) },
  };
}
