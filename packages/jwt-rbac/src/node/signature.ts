import {
  constants,
  createHmac,
  KeyObject,
  timingSafeEqual,
  type VerifyKeyObjectInput,
  verify,
} from "node:crypto";
import { hashBits } from "../token/algorithms.js";
import type { ImportedKey, SignatureVerifier } from "../token/signature-types.js";

type NodeKey =
  | { readonly kind: "hmac"; readonly hash: string; readonly key: KeyObject }
  | {
      readonly kind: "asymmetric";
      readonly hash: string | null;
      /** Exact signature length where the algorithm fixes one (ES*: raw r||s; EdDSA). */
      readonly signatureLength: number | undefined;
      readonly key: KeyObject | VerifyKeyObjectInput;
    };

const EC_SIGNATURE_LENGTH: Record<string, number> = { ES256: 64, ES384: 96, ES512: 132 };

/**
 * node:crypto one-shot verification with KeyObjects made once from the imported CryptoKeys: no
 * thread-pool hand-off per token, unlike WebCrypto on Node. Selected by the package's `node` export condition.
 */
export const nodeCryptoVerifier: SignatureVerifier<NodeKey> = {
  name: "node:crypto",
  prepare({ alg, cryptoKey }: ImportedKey): NodeKey {
    const key = KeyObject.from(cryptoKey);
    const hash = alg === "EdDSA" ? null : `sha${hashBits(alg)}`;
    if (alg.startsWith("HS")) return { kind: "hmac", hash: hash as string, key };
    if (alg.startsWith("PS")) {
      const saltLength = hashBits(alg) / 8;
      return {
        kind: "asymmetric",
        hash,
        signatureLength: undefined,
        key: { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength },
      };
    }
    if (alg.startsWith("ES")) {
      return {
        kind: "asymmetric",
        hash,
        signatureLength: EC_SIGNATURE_LENGTH[alg],
        key: { key, dsaEncoding: "ieee-p1363" },
      };
    }
    return { kind: "asymmetric", hash, signatureLength: alg === "EdDSA" ? 64 : undefined, key };
  },
  verify(key: NodeKey, _alg, token: string, signingInputEnd: number, signature: Uint8Array): boolean {
    if (key.kind === "hmac") {
      const expected = createHmac(key.hash, key.key).update(token.slice(0, signingInputEnd)).digest();
      return expected.length === signature.length && timingSafeEqual(expected, signature);
    }
    if (key.signatureLength !== undefined && signature.length !== key.signatureLength) return false;
    try {
      return verify(key.hash, Buffer.from(token.slice(0, signingInputEnd), "latin1"), key.key, signature);
    } catch {
      // Malformed signatures for the key type (e.g. a wrong-length RSA signature) are failures, not faults.
      return false;
    }
  },
};
