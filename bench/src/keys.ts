import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  type SignKeyObjectInput,
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

function signingInput(alg: Alg, extraClaims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg, typ: "JWT" })).toString("base64url");
  const payload = Buffer.from(
    JSON.stringify({ sub: "user-1", scopes: [SCOPE], iat: now, exp: now + 3600, ...extraClaims }),
  ).toString("base64url");
  return `${header}.${payload}`;
}

function signArguments(keys: KeyMaterial): [string | null, KeyObject | SignKeyObjectInput] {
  if (keys.alg === "ES256") return ["sha256", { key: keys.signKey, dsaEncoding: "ieee-p1363" }];
  return [keys.alg === "EdDSA" ? null : "sha256", keys.signKey];
}

/** Signs a JWT with node:crypto directly (much faster than jose for the thousands of tokens the HTTP group rotates). */
export function signToken(keys: KeyMaterial, extraClaims: Record<string, unknown> = {}): string {
  const input = signingInput(keys.alg, extraClaims);
  const data = Buffer.from(input);
  const [digest, key] = signArguments(keys);
  const signature =
    keys.alg === "HS256" ? createHmac("sha256", keys.signKey).update(data).digest() : sign(digest, data, key);
  return `${input}.${signature.toString("base64url")}`;
}

/** `count` distinct tokens (distinct `jti`); asymmetric signatures run on the thread pool, so both cores sign. */
export async function signTokens(keys: KeyMaterial, count: number): Promise<string[]> {
  if (keys.alg === "HS256") return Array.from({ length: count }, (_, i) => signToken(keys, { jti: `t${i}` }));
  const [digest, key] = signArguments(keys);
  const one = (i: number) =>
    new Promise<string>((resolve, reject) => {
      const input = signingInput(keys.alg, { jti: `t${i}` });
      sign(digest, Buffer.from(input), key, (error, signature) =>
        error ? reject(error) : resolve(`${input}.${signature.toString("base64url")}`),
      );
    });
  const tokens: string[] = [];
  for (let start = 0; start < count; start += 256) {
    const batch = Array.from({ length: Math.min(256, count - start) }, (_, i) => one(start + i));
    tokens.push(...(await Promise.all(batch)));
  }
  return tokens;
}
