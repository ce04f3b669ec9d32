import type { Logger } from "@agent-platform/common";
import type { TenantsSettings } from "../tenants/config.js";
import { TenantIssuers } from "../tenants/index.js";
import type { SignatureVerifier } from "../verify/signature-types.js";
import type { IssuerConfig } from "./config.js";
import { discoverJwksUri } from "./discovery.js";
import { describeUrl } from "./fetch-json.js";
import { loadStaticKeys } from "./keys.js";
import { RemoteKeySet, type RemoteKeysSettings } from "./remote-jwks.js";
import type { TrustedIssuer } from "./trusted-issuer.js";

/** What trust is built from: the resolved issuers, remote-key settings and tenants. */
export interface TrustConfig {
  readonly issuers: readonly IssuerConfig[];
  readonly remoteKeys: RemoteKeysSettings;
  readonly tenants: TenantsSettings | undefined;
}

/** Who is trusted: issuers by their exact `iss` string, or one issuer for tokens with any `iss`. */
export interface Trust {
  /** A Map, not an object: a token's `iss` ("__proto__", "constructor") is data, never a property name. */
  readonly byIssuer: ReadonlyMap<string, TrustedIssuer>;
  readonly anyIssuer: TrustedIssuer | undefined;
  /** Issuers made when a token names them (templates, resolver). */
  readonly tenants: TenantIssuers | undefined;
}

/** The issuer a token names, from its unverified `iss`; `undefined` when it is not trusted. */
export function selectIssuer(trust: Trust, iss: unknown): TrustedIssuer | undefined {
  if (trust.anyIssuer !== undefined) return trust.anyIssuer;
  return typeof iss === "string" ? trust.byIssuer.get(iss) : undefined;
}

function remoteKeySet(
  issuer: IssuerConfig,
  config: TrustConfig,
  verifier: SignatureVerifier,
  logger: Logger,
  onChange: () => void,
): RemoteKeySet | undefined {
  const settings = config.remoteKeys;
  const { jwksUrl, discoveryIssuer } = issuer;
  let locate: () => Promise<URL>;
  let name: string;
  if (jwksUrl !== undefined) {
    locate = async () => jwksUrl;
    name = `remote JWKS ${describeUrl(jwksUrl)}`;
  } else if (discoveryIssuer !== undefined) {
    // Read once: after the first good discovery document only the JWKS is refetched.
    let found: URL | undefined;
    locate = async () => {
      found ??= await discoverJwksUri(discoveryIssuer, issuer.option, settings);
      return found;
    };
    name = `JWKS of issuer "${discoveryIssuer}" (discovery)`;
  } else {
    return undefined;
  }
  return new RemoteKeySet({
    locate,
    name,
    algorithms: issuer.algorithms,
    settings,
    verifier,
    logger,
    onChange,
  });
}

/** Imports every local key and sets up remote key sets (fetched on first need). Rejects with a ConfigError. */
export async function loadTrust(
  config: TrustConfig,
  verifier: SignatureVerifier,
  logger: Logger,
  onKeysChanged: () => void,
): Promise<Trust> {
  const byIssuer = new Map<string, TrustedIssuer>();
  let anyIssuer: TrustedIssuer | undefined;
  const trust = async (issuer: IssuerConfig): Promise<TrustedIssuer> => ({
    rules: issuer,
    allowed: new Set(issuer.algorithms),
    keys: await loadStaticKeys(issuer, verifier, logger),
    remote: remoteKeySet(issuer, config, verifier, logger, onKeysChanged),
  });
  for (const issuer of config.issuers) {
    const trusted = await trust(issuer);
    if (issuer.issuer === undefined) anyIssuer = trusted;
    else for (const iss of issuer.issuer) byIssuer.set(iss, trusted);
  }
  const { tenants } = config;
  return {
    byIssuer,
    anyIssuer,
    tenants:
      tenants === undefined
        ? undefined
        : new TenantIssuers(tenants, (entry, option) => trust(tenants.resolveEntry(entry, option)), logger),
  };
}
