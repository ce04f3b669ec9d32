/**
 * The token's way through the package, one folder per stage:
 * - `read/`: where a request's token comes from (Authorization header or cookie, CSRF rules for cookies);
 * - `verify/`: decoding, signature, `typ`, claims and algorithms, and the verified-token cache;
 * - `keys/`: the keys a signature is checked with (static keys, remote JWKS, discovery, key hygiene) and which
 *   issuers are trusted;
 * - `dpop/`, `introspection/`, `tenants/`: sender-constrained tokens, opaque tokens, issuers made per tenant.
 * What a token may then do (scopes, routes) is `../rbac/`. The rest of the package imports the stages from here.
 */
export { boundAsBearerError } from "./dpop/errors.js";
export { DpopGate } from "./dpop/index.js";
export { kindOf, type OpaqueOutcome, OpaqueTokens } from "./introspection/index.js";
export { loadTrust, type Trust } from "./keys/trust.js";
export { type HeadersInput, isCorsPreflight } from "./read/headers.js";
export {
  connectionScheme,
  type RequestOrigins,
  requestOrigins,
  schemeOf,
} from "./read/public-origin.js";
export { resolveToken } from "./read/resolve.js";
export { TokenCache } from "./verify/cache.js";
export type { Runtime } from "./verify/signature-types.js";
export { TokenVerifier, type VerifyResult } from "./verify/verify.js";
