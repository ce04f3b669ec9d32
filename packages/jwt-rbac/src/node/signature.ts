import {
  constants,
  createHmac,
  createVerify,
  KeyObject,
  type VerifyKeyObjectInput,
  verify,
} from "node:crypto";
import { hashBits } from "../token/verify/algorithms.js";
import type { ImportedKey, SignatureVerifier } from "../token/verify/signature-types.js";

type NodeKey =
  | { readonly kind: "hmac"; readonly hash: string; readonly key: KeyObject }
  | {
      readonly kind: "asymmetric";
      readonly hash: string | null;
      /** Exact signature length where the algorithm fixes one (ES*: raw r||s; EdDSA). */
      readonly signatureLength: number | undefined;
      readonly key: KeyObject | VerifyKeyObjectInput;
    };

/**
 * Whether `text[from, end)` is `expected`, in time that depends on the lengths only (which are public: the
 * algorithm fixes the MAC's), never on where the first difference is.
 */
function equalInConstantTime(expected: string, text: string, from: number): boolean {
  if (text.length - from !== expected.length) return false;
  let difference = 0;
  for (let i = 0; i < expected.length; i++) difference |= expected.charCodeAt(i) ^ text.charCodeAt(from + i);
  return difference === 0;
}

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
  verify(key: NodeKey, _alg, token: string, signingInputEnd: number): boolean {
    if (key.kind === "hmac") {
      // The MAC's canonical base64url against the token's, which decodeJws checked canonical: equal text is
      // equal bytes, with no decode and no Buffer per token.
      const expected = createHmac(key.hash, key.key)
        .update(token.slice(0, signingInputEnd))
        .digest("base64url");
      return equalInConstantTime(expected, token, signingInputEnd + 1);
    }
    const signature = Buffer.from(token.slice(signingInputEnd + 1), "base64url");
    if (key.signatureLength !== undefined && signature.length !== key.signatureLength) return false;
    try {
      // A Verify stream where there is a hash (RSA, ECDSA): it costs less than the one-shot `verify`, whose job
      // object is made per call (see bench/notes/profiles.md); Ed25519 takes only the one-shot.
      return key.hash === null
        ? verify(null, Buffer.from(token.slice(0, signingInputEnd), "latin1"), key.key, signature)
        : createVerify(key.hash).update(token.slice(0, signingInputEnd), "latin1").verify(key.key, signature);
    } catch {
      // Malformed signatures for the key type (e.g. a wrong-length RSA signature) are failures, not faults.
      return false;
    }
  },
};
