import { configError } from "@agent-platform/common/internal";
import { describeUrl, type FetchLimits, fetchJson, isAllowedRemoteUrl } from "./fetch-json.js";

/** Where OpenID Connect Discovery 1.0 (§4) puts an issuer's metadata. */
export function discoveryUrl(issuer: string): URL {
  return new URL(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`);
}

/**
 * Reads the issuer's discovery document and returns its `jwks_uri`. The document must name exactly
 * the configured issuer (OIDC Discovery §4.3), else whoever serves it could hand out keys for another
 * issuer: that is a configuration error, not a passing outage.
 */
export async function discoverJwksUri(issuer: string, option: string, limits: FetchLimits): Promise<URL> {
  const url = discoveryUrl(issuer);
  const { value } = await fetchJson(url, limits);
  const document = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (document.issuer !== issuer) {
    const named = typeof document.issuer === "string" ? `"${document.issuer.slice(0, 200)}"` : "no issuer";
    throw configError(
      "jwt-rbac",
      `${option}: the discovery document at ${describeUrl(url)} names ${named}, not the configured issuer "${issuer}"`,
    );
  }
  let jwksUri: URL | undefined;
  try {
    jwksUri = typeof document.jwks_uri === "string" ? new URL(document.jwks_uri) : undefined;
  } catch {
    jwksUri = undefined;
  }
  if (jwksUri === undefined || !isAllowedRemoteUrl(jwksUri)) {
    throw new Error(`${describeUrl(url)}: no usable jwks_uri (https, or http on loopback)`);
  }
  return jwksUri;
}
