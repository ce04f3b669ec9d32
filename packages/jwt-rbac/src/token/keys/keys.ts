import type { Logger } from "@agent-platform/common";
import { configError } from "@agent-platform/common/internal";
import { exportJWK, importJWK, importSPKI, importX509, type JWK } from "jose";
import { getOrCreate } from "../../get-or-create.js";
import type { JwtAlgorithm } from "../../options.js";
import { hashBits, isHmac, keyFamily } from "../verify/algorithms.js";
import type { SignatureVerifier } from "../verify/signature-types.js";
import { keyWeakness } from "./key-strength.js";
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

/** The keys given in the configuration, imported once. */
export interface StaticKeys {
  /** `verificationKeys`, per algorithm, in configured order. */
  readonly ordered: ReadonlyMap<JwtAlgorithm, readonly PreparedKey[]>;
  /** Inline and file JWKS keys. */
  readonly jwks: KeyIndex;
}

export interface KeySources {
  readonly verificationKeys: readonly string[];
  readonly jwks: readonly JWK[];
  readonly algorithms: readonly JwtAlgorithm[];
}

const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth"] as const;

/**
 * Fails fast, before any import, on key entries that cannot fit any configured algorithm. `option`
 * names the entries in messages (`verificationKeys`, `issuers[1].verificationKeys`).
 */
export function checkKeyShapes(
  keys: readonly unknown[],
  algorithms: readonly JwtAlgorithm[],
  option = "verificationKeys",
): asserts keys is readonly string[] {
  const hmac = algorithms.some(isHmac);
  const asymmetric = algorithms.some((alg) => !isHmac(alg));
  // RFC 7518 §3.2: an HMAC key at least as long as the hash output.
  const hmacBytes = Math.max(0, ...algorithms.filter(isHmac).map((alg) => hashBits(alg) / 8));
  keys.forEach((key, index) => {
    const label = `${option}[${index}]`;
    if (typeof key !== "string") {
      throw configError(
        "jwt-rbac",
        `${label} is ${key === undefined ? "undefined (an unset environment variable?)" : `a ${typeof key}`}; expected a key string`,
      );
    }
    if (key.trim() === "")
      throw configError("jwt-rbac", `${label} is empty (an unset environment variable?)`);
    const shape = keyShape(key);
    if (shape === "secret" && hmac && new TextEncoder().encode(key).length < hmacBytes) {
      throw configError(
        "jwt-rbac",
        `${label} is a shared secret shorter than ${hmacBytes} bytes; ${algorithms.filter(isHmac).join(", ")} needs a random secret of at least ${hmacBytes} bytes (RFC 7518 §3.2)`,
      );
    }
    if (shape === "jwk") {
      const jwk = parseJwkString(key, label);
      if (jwk.kty !== "oct" && PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) {
        throw configError("jwt-rbac", `${label} is a private JWK; pass only the public key`);
      }
    }
    if (shape === "pem-other") {
      throw configError(
        "jwt-rbac",
        `${label} is a PEM block that is neither a public key (SPKI) nor a certificate; pass the public key, never a private key`,
      );
    }
    if ((shape === "pem-public" || shape === "pem-certificate") && !asymmetric) {
      throw configError(
        "jwt-rbac",
        `${label} looks like a PEM public key, but only ${algorithms.join(", ")} is configured: HMAC secrets must not be public keys`,
      );
    }
    if (shape === "secret" && !hmac) {
      throw configError(
        "jwt-rbac",
        `${label} looks like a shared secret, but ${algorithms.join(", ")} needs a public key (PEM SPKI, PEM certificate or JWK JSON)`,
      );
    }
  });
}

/** Checks the JWKS document shape; returns its keys. */
export function parseJwks(value: unknown, source: string): JWK[] {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (typeof value !== "object" || value === null || !Array.isArray(keys)) {
    throw configError("jwt-rbac", `${source} is not a JWKS: expected a JSON object with a "keys" array`);
  }
  keys.forEach((key, index) => {
    if (typeof key !== "object" || key === null || typeof (key as JWK).kty !== "string") {
      throw configError("jwt-rbac", `${source}: key #${index + 1} is not a JWK (no "kty")`);
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

export function jwkFitsAlgorithm(jwk: JWK, alg: JwtAlgorithm): boolean {
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
  if (weakness !== undefined) throw configError("jwt-rbac", `${label} is refused: ${weakness}`);
}

async function importJwkFor(jwk: JWK, alg: JwtAlgorithm, label: string): Promise<CryptoKey> {
  refuseWeakKey(jwk, label);
  const imported = await importJWK(jwk, alg);
  return imported instanceof Uint8Array ? hmacKey(imported, alg) : imported;
}

async function importStringKey(
  key: string,
  alg: JwtAlgorithm,
  label: string,
): Promise<CryptoKey | undefined> {
  const shape = keyShape(key);
  if (isHmac(alg)) {
    if (shape === "jwk") {
      const jwk = parseJwkString(key, label);
      return jwkFitsAlgorithm(jwk, alg) ? importJwkFor(jwk, alg, label) : undefined;
    }
    if (shape !== "secret") return undefined;
    return hmacKey(new TextEncoder().encode(key), alg);
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
    throw configError("jwt-rbac", `${label} starts with "{" but is not valid JSON (expected a JWK)`);
  }
  if (typeof jwk !== "object" || jwk === null || typeof (jwk as JWK).kty !== "string") {
    throw configError("jwt-rbac", `${label} is not a JWK (no "kty")`);
  }
  return jwk as JWK;
}

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  getOrCreate(map, key, () => []).push(value);
}

/** Keys of a JWKS, imported for the configured algorithms, by algorithm and `kid`. */
export interface KeyIndex {
  readonly byKid: ReadonlyMap<JwtAlgorithm, ReadonlyMap<string, readonly PreparedKey[]>>;
  /** Every key per algorithm, for tokens without `kid`. */
  readonly all: ReadonlyMap<JwtAlgorithm, readonly PreparedKey[]>;
}

/**
 * Imports each JWK once per configured algorithm it fits. `unusable` decides what a key that fits but
 * cannot be imported means: a configuration error for local keys, a skipped key for fetched ones.
 */
export async function indexJwks(
  jwks: readonly JWK[],
  algorithms: readonly JwtAlgorithm[],
  verifier: SignatureVerifier,
  logger: Logger,
  weakKeys: { readonly filter: WeakKeyFilter; readonly source: string },
  unusable: (label: string, problem: string) => void,
): Promise<KeyIndex> {
  const byKid = new Map<JwtAlgorithm, Map<string, PreparedKey[]>>();
  const all = new Map<JwtAlgorithm, PreparedKey[]>();
  for (const [index, jwk] of jwks.entries()) {
    const kid = typeof jwk.kid === "string" ? jwk.kid : undefined;
    const label = jwksKeyLabel(jwk, index);
    if (jwk.kty !== "oct" && PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) {
      unusable(label, "is a private JWK; pass only the public key");
      continue;
    }
    const fitting = algorithms.filter((alg) => jwkFitsAlgorithm(jwk, alg));
    if (fitting.length === 0) {
      logger.debug(`jwt-rbac: ${label} fits none of ${algorithms.join(", ")}; skipped`);
      continue;
    }
    // One bad key of a JWKS (an issuer's old 1024-bit key, say) must not take down the others.
    if (weakKeys.filter.skip(jwk, label, weakKeys.source)) continue;
    for (const alg of fitting) {
      let cryptoKey: CryptoKey;
      try {
        cryptoKey = await importJwkFor(jwk, alg, label);
      } catch (error) {
        unusable(label, `cannot be imported for ${alg}: ${(error as Error).message}`);
        continue;
      }
      const prepared: PreparedKey = { alg, kid, key: verifier.prepare({ alg, kid, cryptoKey }) };
      append(all, alg, prepared);
      if (kid !== undefined)
        append(
          getOrCreate(byKid, alg, () => new Map()),
          kid,
          prepared,
        );
    }
  }
  return { byKid, all };
}

/** Imports and prepares every local key once. Rejects with a ConfigError. */
export async function loadStaticKeys(
  sources: KeySources,
  verifier: SignatureVerifier,
  logger: Logger,
): Promise<StaticKeys> {
  const ordered = new Map<JwtAlgorithm, PreparedKey[]>();
  for (const [index, key] of sources.verificationKeys.entries()) {
    const label = `verification key #${index + 1}`;
    let usable = 0;
    for (const alg of sources.algorithms) {
      const cryptoKey = await importStringKey(key, alg, label);
      if (cryptoKey === undefined) continue;
      append(ordered, alg, {
        alg,
        kid: undefined,
        key: verifier.prepare({ alg, kid: undefined, cryptoKey }),
      });
      usable++;
    }
    if (usable === 0) {
      throw configError("jwt-rbac", `${label} cannot be imported for ${sources.algorithms.join(", ")}`);
    }
  }
  const weakKeys = { filter: new WeakKeyFilter(logger), source: "JWKS" };
  const jwks = await indexJwks(
    sources.jwks,
    sources.algorithms,
    verifier,
    logger,
    weakKeys,
    (label, problem) => {
      throw configError("jwt-rbac", `${label} ${problem}`);
    },
  );
  if (sources.jwks.length > 0 && jwks.all.size === 0) {
    throw configError("jwt-rbac", `no JWKS key can be used with ${sources.algorithms.join(", ")}`);
  }
  return { ordered, jwks };
}
