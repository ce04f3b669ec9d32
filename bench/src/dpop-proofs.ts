import { createHash, generateKeyPairSync, sign } from "node:crypto";

/**
 * A DPoP client for the bench (RFC 9449): one P-256 key, its RFC 7638 thumbprint, and proofs signed ahead
 * of the measurement with node:crypto, so signing never counts in the resource server's figures.
 */
export interface ProofPool {
  /** The key's thumbprint, for the bound token's `cnf.jkt`. */
  readonly jkt: string;
  /** `count` proofs for `method url` and `accessToken`, each with its own `jti`. */
  proofs(method: string, url: string, accessToken: string, count: number): Promise<string[]>;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export function proofPool(): ProofPool {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { kty, crv, x, y } = publicKey.export({ format: "jwk" });
  const jwk = { crv, kty, x, y };
  const jkt = createHash("sha256").update(JSON.stringify(jwk)).digest("base64url");
  const header = b64({ typ: "dpop+jwt", alg: "ES256", jwk });
  return {
    jkt,
    async proofs(method, url, accessToken, count) {
      const ath = createHash("sha256").update(accessToken).digest("base64url");
      const iat = Math.floor(Date.now() / 1000);
      const one = (i: number) =>
        new Promise<string>((resolve, reject) => {
          const input = `${header}.${b64({ htm: method, htu: url, iat, jti: `p${i}-${iat}`, ath })}`;
          sign(
            "sha256",
            Buffer.from(input),
            { key: privateKey, dsaEncoding: "ieee-p1363" },
            (error, signature) =>
              error ? reject(error) : resolve(`${input}.${signature.toString("base64url")}`),
          );
        });
      const proofs: string[] = [];
      for (let start = 0; start < count; start += 256) {
        proofs.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(256, count - start) }, (_, i) => one(start + i)),
          )),
        );
      }
      return proofs;
    },
  };
}
