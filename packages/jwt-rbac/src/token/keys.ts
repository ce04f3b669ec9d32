import { exportJWK, importJWK, importSPKI, importX509, type JWK, type RemoteJWKSet } from "jose";
import { JwtRbacConfigError } from "../errors.js";
import { getOrCreate } from "../get-or-create.js";
import type { JwtAlgorithm, JwtRbacLogger } from "../options.js";
import { hashBits, isHmac, keyFamily } from "./algorithms.js";
import { keyWeakness } from "./key-strength.js";
import { createRemoteKeySet } from "./remote-jwks.js";
import type { ImportedKey, SignatureVerifier } from "./signature-types.js";
import { jwksKeyLabel, WeakKeyFilter } from "./weak-keys.js";

/** What a configured key string looks like, decided without importing it. */
export type KeyShape = "pem-public" | "pem-certificate" | "pem-other" | "jwk" | "secret";

export function keyShape(key: string): KeyShape {
  const trimmed = key.trimStart();
  if (trimmed.startsWith("-----BEGIN PUBLIC KEY-----")) return "pem-public";
  if (trimmed.startsWith("-----BEGIN CERTIFICATE-----")) return "pem-certificate";
  if (trimmed.startsWith("-----BEGIN ")) return "pem-other";
  if (trimmed.startsWith("{")) return "jwk";
  return "secret";
}

/** Env values often carry PEM newlines as literal `\n`. */
export function normalisePem(key: string): string {
  return key.trimStart().startsWith("-----BEGIN ") ? key.replace(/\\n/g, "\n").trim() : key;
}

export interface PreparedKey {
  readonly alg: JwtAlgorithm;
  readonly kid: string | undefined;
  readonly key: unknown;
}

export interface KeyRing {
  /** `verificationKeys`, per algorithm, in configured order. */
  readonly ordered: ReadonlyMap<JwtAlgorithm, readonly PreparedKey[]>;
  /** JWKS keys per algorithm and kid. */
  readonly byKid: ReadonlyMap<JwtAlgorithm, ReadonlyMap<string, readonly PreparedKey[]>>;
  /** JWKS keys per algorithm, for tokens without `kid`. */
  readonly jwksAll: ReadonlyMap<JwtAlgorithm, readonly PreparedKey[]>;
  readonly remote: RemoteJWKSet | undefined;
}

export interface KeySources {
  readonly verificationKeys: readonly string[];
  readonly jwks: readonly JWK[];
  readonly jwksUrl: URL | undefined;
  readonly algorithms: readonly JwtAlgorithm[];
}

const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth"] as const;
const MIN_HMAC_SECRET_BYTES = 32;

/** Fails fast, before any import, on key strings that cannot fit any configured algorithm. */
export function checkKeyShapes(keys: readonly string[], algorithms: readonly JwtAlgorithm[]): void {
  const hmac = algorithms.some(isHmac);
  const asymmetric = algorithms.some((alg) => !isHmac(alg));
  keys.forEach((key, index) => {
    const shape = keyShape(key);
    const label = `verification key #${index + 1}`;
    if (key.trim() === "") throw new JwtRbacConfigError(`${label} is empty`);
    if (shape === "jwk") {
      const jwk = parseJwkString(key, label);
      if (jwk.kty !== "oct" && PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) {
        throw new JwtRbacConfigError(`${label} is a private JWK; pass only the public key`);
      }
    }
    if (shape === "pem-other") {
      throw new JwtRbacConfigError(
        `${label} is a PEM block that is neither a public key (SPKI) nor a certificate; pass the public key, never a private key`,
      );
    }
    if ((shape === "pem-public" || shape === "pem-certificate") && !asymmetric) {
      throw new JwtRbacConfigError(
        `${label} looks like a PEM public key, but only ${algorithms.join(", ")} is configured: HMAC secrets must not be public keys`,
      );
    }
    if (shape === "secret" && !hmac) {
      throw new JwtRbacConfigError(
        `${label} looks like a shared secret, but ${algorithms.join(", ")} needs a public key (PEM SPKI, PEM certificate or JWK JSON)`,
      );
    }
  });
}

/** Checks the JWKS document shape; returns its keys. */
export function parseJwks(value: unknown, source: string): JWK[] {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (typeof value !== "object" || value === null || !Array.isArray(keys)) {
    throw new JwtRbacConfigError(`${source} is not a JWKS: expected a JSON object with a "keys" array`);
  }
  keys.forEach((key, index) => {
    if (typeof key !== "object" || key === null || typeof (key as JWK).kty !== "string") {
      throw new JwtRbacConfigError(`${source}: key #${index + 1} is not a JWK (no "kty")`);
    }
  });
  return keys as JWK[];
}

function hmacKey(secret: Uint8Array, alg: JwtAlgorithm): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    secret as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: `SHA-${hashBits(alg)}` },
    false,
    ["verify"],
  );
}

function jwkFitsAlgorithm(jwk: JWK, alg: JwtAlgorithm): boolean {
  if (jwk.use !== undefined && jwk.use !== "sig") return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  if (jwk.kty !== keyFamily(alg)) return false;
  if (jwk.kty === "EC") return jwk.crv === { ES256: "P-256", ES384: "P-384", ES512: "P-521" }[alg as string];
  if (jwk.kty === "OKP") return jwk.crv === "Ed25519";
  return true;
}

/** A configured key that is too weak to trust is a configuration error, named with its label. */
function refuseWeakKey(jwk: JWK, label: string): void {
  const weakness = keyWeakness(jwk);
  if (weakness !== undefined) throw new JwtRbacConfigError(`${label} is refused: ${weakness}`);
}

async function importJwkFor(jwk: JWK, alg: JwtAlgorithm, label: string): Promise<CryptoKey> {
  if (jwk.kty !== "oct" && PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) {
    throw new JwtRbacConfigError(`${label} is a private JWK; pass only the public key`);
  }
  refuseWeakKey(jwk, label);
  const imported = await importJWK(jwk, alg);
  return imported instanceof Uint8Array ? hmacKey(imported, alg) : imported;
}

async function importStringKey(
  key: string,
  alg: JwtAlgorithm,
  label: string,
  logger: JwtRbacLogger,
): Promise<CryptoKey | undefined> {
  const shape = keyShape(key);
  if (isHmac(alg)) {
    if (shape === "jwk") {
      const jwk = parseJwkString(key, label);
      return jwkFitsAlgorithm(jwk, alg) ? importJwkFor(jwk, alg, label) : undefined;
    }
    if (shape !== "secret") return undefined;
    const secret = new TextEncoder().encode(key);
    if (secret.length < MIN_HMAC_SECRET_BYTES) {
      logger.warn(
        `jwt-rbac: ${label} is shorter than ${MIN_HMAC_SECRET_BYTES} bytes; use a longer random secret`,
      );
    }
    return hmacKey(secret, alg);
  }
  if (shape === "secret") return undefined;
  if (shape === "jwk") {
    const jwk = parseJwkString(key, label);
    return jwkFitsAlgorithm(jwk, alg) ? importJwkFor(jwk, alg, label) : undefined;
  }
  let cryptoKey: CryptoKey;
  try {
    // Extractable (it is a public key) so that it can be judged as a JWK by the one key-strength rule.
    const options = { extractable: true };
    cryptoKey =
      shape === "pem-certificate" ? await importX509(key, alg, options) : await importSPKI(key, alg, options);
  } catch {
    // A PEM of another key type (say, an EC key with RS256): not for this algorithm.
    return undefined;
  }
  refuseWeakKey(await exportJWK(cryptoKey), label);
  return cryptoKey;
}

function parseJwkString(key: string, label: string): JWK {
  let jwk: unknown;
  try {
    jwk = JSON.parse(key);
  } catch {
    throw new JwtRbacConfigError(`${label} starts with "{" but is not valid JSON (expected a JWK)`);
  }
  if (typeof jwk !== "object" || jwk === null || typeof (jwk as JWK).kty !== "string") {
    throw new JwtRbacConfigError(`${label} is not a JWK (no "kty")`);
  }
  return jwk as JWK;
}

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  getOrCreate(map, key, () => []).push(value);
}

/** Imports and prepares every key once. Rejects with a JwtRbacConfigError. */
export async function loadKeyRing(
  sources: KeySources,
  verifier: SignatureVerifier,
  logger: JwtRbacLogger,
): Promise<KeyRing> {
  const prepare = (alg: JwtAlgorithm, kid: string | undefined, cryptoKey: CryptoKey): PreparedKey => {
    const imported: ImportedKey = { alg, kid, cryptoKey };
    return { alg, kid, key: verifier.prepare(imported) };
  };

  const ordered = new Map<JwtAlgorithm, PreparedKey[]>();
  for (const [index, key] of sources.verificationKeys.entries()) {
    const label = `verification key #${index + 1}`;
    let usable = 0;
    for (const alg of sources.algorithms) {
      const cryptoKey = await importStringKey(key, alg, label, logger);
      if (cryptoKey === undefined) continue;
      append(ordered, alg, prepare(alg, undefined, cryptoKey));
      usable++;
    }
    if (usable === 0) {
      throw new JwtRbacConfigError(`${label} cannot be imported for ${sources.algorithms.join(", ")}`);
    }
  }

  const byKid = new Map<JwtAlgorithm, Map<string, PreparedKey[]>>();
  const jwksAll = new Map<JwtAlgorithm, PreparedKey[]>();
  const weakKeys = new WeakKeyFilter(logger);
  for (const [index, jwk] of sources.jwks.entries()) {
    const label = jwksKeyLabel(jwk, index);
    const kid = typeof jwk.kid === "string" ? jwk.kid : undefined;
    const algorithms = sources.algorithms.filter((alg) => jwkFitsAlgorithm(jwk, alg));
    if (algorithms.length === 0) {
      logger.debug(`jwt-rbac: ${label} fits none of ${sources.algorithms.join(", ")}; skipped`);
      continue;
    }
    // One bad key of a JWKS (an issuer's old 1024-bit key, say) must not take down the others.
    if (weakKeys.skip(jwk, label, "JWKS")) continue;
    for (const alg of algorithms) {
      let cryptoKey: CryptoKey;
      try {
        cryptoKey = await importJwkFor(jwk, alg, label);
      } catch (error) {
        if (error instanceof JwtRbacConfigError) throw error;
        throw new JwtRbacConfigError(`${label} cannot be imported for ${alg}: ${(error as Error).message}`);
      }
      const prepared = prepare(alg, kid, cryptoKey);
      append(jwksAll, alg, prepared);
      if (kid !== undefined) {
        append(
          getOrCreate(byKid, alg, () => new Map<string, PreparedKey[]>()),
          kid,
          prepared,
        );
      }
    }
  }
  if (sources.jwks.length > 0 && jwksAll.size === 0) {
    throw new JwtRbacConfigError(`no JWKS key can be used with ${sources.algorithms.join(", ")}`);
  }

  const remote = sources.jwksUrl === undefined ? undefined : createRemoteKeySet(sources.jwksUrl, weakKeys);
  return { ordered, byKid, jwksAll, remote };
}
