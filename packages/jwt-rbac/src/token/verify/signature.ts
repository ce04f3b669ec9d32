import { compactVerify } from "jose";
import type { JwtAlgorithm } from "../../options.js";
import type { ImportedKey, SignatureVerifier } from "./signature-types.js";

/**
 * The runtime-neutral verifier: jose over WebCrypto (Bun, Deno, Workers, browsers). Node builds swap
 * this module for `src/node/signature.ts`. Algorithm pinned: jose is told the one algorithm the shared
 * pipeline already accepted, so the token header cannot choose it.
 */
export const webCryptoVerifier: SignatureVerifier<CryptoKey> = {
  name: "webcrypto",
  prepare(key: ImportedKey): CryptoKey {
    return key.cryptoKey;
  },
  verify(key: CryptoKey, alg: JwtAlgorithm, token: string): Promise<boolean> {
    return compactVerify(token, key, { algorithms: [alg] }).then(
      () => true,
      () => false,
    );
  },
};
