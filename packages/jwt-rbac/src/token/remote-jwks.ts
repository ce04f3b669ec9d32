import { createRemoteJWKSet, customFetch, type JWK, type RemoteJWKSet } from "jose";
import { jwksKeyLabel, type WeakKeyFilter } from "./weak-keys.js";

/**
 * jose's remote JWKS (30 s cooldown, 10 min max age), fed only the keys that pass `keyWeakness`:
 * each fetched document is filtered before jose sees it, so a weak key is never selected, imported
 * or cached, and the other keys of the set keep working.
 */
export function createRemoteKeySet(url: URL, weakKeys: WeakKeyFilter): RemoteJWKSet {
  const source = `remote JWKS ${url.origin}${url.pathname}`;
  return createRemoteJWKSet(url, {
    cooldownDuration: 30_000,
    cacheMaxAge: 600_000,
    async [customFetch](resource, init) {
      const response = await fetch(resource, init);
      if (response.status !== 200) return response;
      const text = await response.text();
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch {
        // Not JSON: handed on unchanged, so jose reports it as it would without this filter.
        return new Response(text, { status: 200 });
      }
      const keys = (document as { keys?: unknown } | null)?.keys;
      if (Array.isArray(keys)) {
        (document as { keys: unknown[] }).keys = keys.filter(
          (jwk, index) =>
            typeof jwk !== "object" ||
            jwk === null ||
            !weakKeys.skip(jwk as JWK, jwksKeyLabel(jwk as JWK, index), source),
        );
      }
      return new Response(JSON.stringify(document), { status: 200 });
    },
  });
}
