import type { ClaimRules } from "../verify/claims.js";
import type { StaticKeys } from "./keys.js";
import type { RemoteKeySet } from "./remote-jwks.js";

/** One trusted issuer, ready to verify: its claim rules, algorithms, local keys and remote key set. */
export interface TrustedIssuer {
  readonly rules: ClaimRules;
  readonly allowed: ReadonlySet<string>;
  readonly keys: StaticKeys;
  readonly remote: RemoteKeySet | undefined;
  /** Told when these keys verified a token's signature (tenant issuers: kept from then on). */
  readonly onVerified?: () => void;
}
