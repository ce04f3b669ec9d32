import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
} from "node:crypto";

export const ALGORITHMS = ["HS256", "RS256", "ES256", "EdDSA"] as const;
export type Alg = (typeof ALGORITHMS)[number];

/** One algorithm's key pair, in every form the verifiers under test take. */
export interface KeyMaterial {
  alg: Alg;
  /** What a user passes as configuration: the HMAC secret, or the public key as PEM SPKI. */
  verificationText: string;
  /** The node:crypto key a one-shot verify uses (secret or public). */
  verifyKey: KeyObject;
  signKey: KeyObject;
}

/** Serialisable form, for handing keys to a server child process through its environment. */
export interface KeyExport {
  alg: Alg;
  verificationText: string;
  signPem: string;
}

export function makeKeys(alg: Alg): KeyMaterial {
  if (alg === "HS256") {
    const secret = randomBytes(32).toString("base64url");
    const key = createSecretKey(Buffer.from(secret, "utf8"));
    return { alg, verificationText: secret, verifyKey: key, signKey: key };
  }
  const pair =
    alg === "RS256"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : alg === "ES256"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : generateKeyPairSync("ed25519");
  const pem = pair.publicKey.export({ type: "spki", format: "pem" }).toString();
  return { alg, verificationText: pem, verifyKey: pair.publicKey, signKey: pair.privateKey };
}

export function exportKeys(keys: KeyMaterial): KeyExport {
  const signPem =
    keys.alg === "HS256"
      ? keys.verificationText
      : keys.signKey.export({ type: "pkcs8", format: "pem" }).toString();
  return { alg: keys.alg, verificationText: keys.verificationText, signPem };
}

export function importKeys(exported: KeyExport): KeyMaterial {
  if (exported.alg === "HS256") {
    const key = createSecretKey(Buffer.from(exported.verificationText, "utf8"));
    return { alg: "HS256", verificationText: exported.verificationText, verifyKey: key, signKey: key };
  }
  return {
    alg: exported.alg,
    verificationText: exported.verificationText,
    verifyKey: createPublicKey(exported.verificationText),
    signKey: createPrivateKey(exported.signPem),
  };
}

export const SCOPE = "bench:read";

/** Signs a JWT with node:crypto directly: much faster than jose for the thousands of tokens the HTTP group rotates. */
export function signToken(keys: KeyMaterial, extraClaims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg: keys.alg, typ: "JWT" })).toString("base64url");
  const payload = Buffer.from(
    JSON.stringify({ sub: "user-1", scopes: [SCOPE], iat: now, exp: now + 3600, ...extraClaims }),
  ).toString("base64url");
  const input = `${header}.${payload}`;
  return `${input}.${signatureOf(keys, Buffer.from(input)).toString("base64url")}`;
}

function signatureOf(keys: KeyMaterial, data: Buffer): Buffer {
  switch (keys.alg) {
    case "HS256":
      return createHmac("sha256", keys.signKey).update(data).digest();
    case "RS256":
      return sign("sha256", data, keys.signKey);
    case "ES256":
      return sign("sha256", data, { key: keys.signKey, dsaEncoding: "ieee-p1363" });
    case "EdDSA":
      return sign(null, data, keys.signKey);
  }
}
