import { base64url, calculateJwkThumbprint, importJWK, type JWK } from "jose";
import type { AuthError } from "../../errors.js";
import type { JwtAlgorithm } from "../../options.js";
import { keyWeakness } from "../keys/key-strength.js";
import { keyFamily } from "../verify/algorithms.js";
import { decodeJws } from "../verify/decode.js";
import type { Runtime } from "../verify/signature-types.js";
import { typMatcher } from "../verify/typ.js";
import { invalidProofError } from "./errors.js";
import { normaliseHtu } from "./htu.js";
import { MAX_JTI_LENGTH, MAX_PROOF_LENGTH } from "./options.js";

/** What a request offers to check a proof against. */
export interface ProofContext {
  /** The request method as received (`htm` is compared exactly). */
  readonly method: string;
  /** The request URL the router routes, as received (query and fragment are ignored). */
  readonly url: string | undefined;
  /** The access token the proof must be bound to (`ath`). */
  readonly accessToken: string;
  /** The token's `cnf.jkt`: the thumbprint the proof's key must have. */
  readonly jkt: string;
  readonly nowMs: number;
}

/** A proof whose signature, type, key, method, URL, age and `ath` hold. Nonce and replay are the caller's. */
export interface CheckedProof {
  /** RFC 7638 thumbprint of the proof's key. */
  readonly jkt: string;
  readonly jti: string;
  readonly iat: number;
  readonly nonce: unknown;
}

export interface ProofRules {
  readonly algorithms: ReadonlySet<string>;
  readonly maxAgeSec: number;
  readonly clockSkewSec: number;
  readonly realm: string;
}

class KeyRefused {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/** RFC 7638 §3.2: the required members of each key type, in the thumbprint's (lexicographic) order. */
const REQUIRED_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ["crv", "kty", "x", "y"],
  RSA: ["e", "kty", "n"],
  OKP: ["crv", "kty", "x"],
};
const CURVE: Readonly<Record<string, string>> = {
  ES256: "P-256",
  ES384: "P-384",
  ES512: "P-521",
  EdDSA: "Ed25519",
};
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
/** Distinct proof keys kept imported: clients reuse one key for many proofs. */
const KEY_CACHE_MAX = 1024;

const encoder = new TextEncoder();
const isDpopTyp = typMatcher("dpop+jwt");

async function sha256Base64Url(text: string): Promise<string> {
  return base64url.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}

/**
 * A bounded memo of SHA-256 digests (`ath` of a token, thumbprint of a key): a client sends the same token
 * and key with every proof, so each is hashed once rather than once per request. Only reached for a
 * verified bound token, so its entries are real clients'; the oldest goes first.
 */
class DigestMemo {
  readonly #digests = new Map<string, Promise<string>>();
  get(text: string, digest: (text: string) => Promise<string>): Promise<string> {
    let value = this.#digests.get(text);
    if (value === undefined) {
      value = digest(text);
      if (this.#digests.size >= KEY_CACHE_MAX) {
        for (const oldest of this.#digests.keys()) {
          this.#digests.delete(oldest);
          break;
        }
      }
      this.#digests.set(text, value);
    }
    return value;
  }
}

/** The public key's required members only, or why the `jwk` header is not a public key for `alg`. */
function publicJwk(value: unknown, alg: JwtAlgorithm): JWK | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "no jwk header";
  const jwk = value as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) return "the jwk header holds a private or secret key";
  const family = keyFamily(alg);
  if (jwk.kty !== family) return "the jwk header's key type does not fit the algorithm";
  if (family !== "RSA" && jwk.crv !== CURVE[alg]) return "the jwk header's curve does not fit the algorithm";
  const members = REQUIRED_MEMBERS[family] as readonly string[];
  const minimal: Record<string, string> = {};
  for (const member of members) {
    const field = jwk[member];
    if (typeof field !== "string" || field.length > 1400) return "the jwk header is not a public key";
    minimal[member] = field;
  }
  return minimal as JWK;
}

/**
 * Checks a DPoP proof (RFC 9449 §4.3) on either build: decoded by the shared decoder, its signature
 * checked by the platform's verifier, the same as tokens. Keys are imported once per distinct key
 * (bounded), so a client's proofs cost one signature check each. Reached only for a request whose
 * access token already verified, so unauthenticated traffic never gets here.
 */
export class ProofVerifier {
  readonly #rules: ProofRules;
  readonly #runtime: Runtime;
  /** Imported proof keys by algorithm and thumbprint (or why the key is refused). */
  readonly #keys = new Map<string, Promise<unknown>>();
  readonly #aths = new DigestMemo();
  readonly #thumbprints = new DigestMemo();

  constructor(rules: ProofRules, runtime: Runtime) {
    this.#rules = rules;
    this.#runtime = runtime;
  }

  #fail(detail: string): AuthError {
    return invalidProofError(detail, this.#rules.realm);
  }

  /**
   * The key prepared for the platform's verifier, or why it is refused (a weak key: RSA under 2048 bits,
   * ROCA, a point off its curve, by the rule for every other key). Cached by thumbprint: only the key a
   * verified token is bound to gets here, so the cache holds the keys of real clients.
   */
  #key(jwk: JWK, alg: JwtAlgorithm, jkt: string): Promise<unknown> {
    const id = `${alg}:${jkt}`;
    let key = this.#keys.get(id);
    if (key === undefined) {
      key = (async () => {
        const weakness = keyWeakness(jwk);
        if (weakness !== undefined) return new KeyRefused(`the jwk header's key is refused: ${weakness}`);
        try {
          const cryptoKey = (await importJWK({ ...jwk, ext: true }, alg)) as CryptoKey;
          return this.#runtime.verifier.prepare({ alg, kid: undefined, cryptoKey });
        } catch {
          return new KeyRefused("the jwk header is not a usable public key");
        }
      })();
      if (this.#keys.size >= KEY_CACHE_MAX) {
        for (const oldest of this.#keys.keys()) {
          this.#keys.delete(oldest);
          break;
        }
      }
      this.#keys.set(id, key);
    }
    return key;
  }

  async check(proof: string | undefined, context: ProofContext): Promise<CheckedProof | AuthError> {
    if (proof === undefined) return this.#fail("DPoP header missing");
    if (proof.length > MAX_PROOF_LENGTH) return this.#fail("proof too large");
    const decoded = decodeJws(proof, this.#runtime.base64Url);
    if (decoded === "malformed") return this.#fail("not a compact JWS");
    const { header, payload } = decoded;
    if (!isDpopTyp(header.typ)) return this.#fail("typ is not dpop+jwt");
    if (header.crit !== undefined) return this.#fail("unsupported critical header parameter");
    if (!this.#rules.algorithms.has(header.alg)) return this.#fail("algorithm not allowed");
    const alg = header.alg as JwtAlgorithm;
    const jwk = publicJwk(header.jwk, alg);
    if (typeof jwk === "string") return this.#fail(jwk);

    const { method, url, accessToken, nowMs } = context;
    if (payload.htm !== method) return this.#fail("htm does not match the request method");
    const expected = url === undefined ? undefined : normaliseHtu(url);
    if (expected === undefined || normaliseHtu(payload.htu) !== expected) {
      return this.#fail("htu does not match the request URL");
    }
    const { iat, jti } = payload;
    const nowSeconds = nowMs / 1000;
    const { maxAgeSec, clockSkewSec } = this.#rules;
    if (typeof iat !== "number" || !Number.isFinite(iat)) return this.#fail("iat missing");
    if (iat > nowSeconds + clockSkewSec) return this.#fail("iat is in the future");
    if (iat < nowSeconds - maxAgeSec - clockSkewSec) return this.#fail("proof too old");
    if (typeof jti !== "string" || jti === "" || jti.length > MAX_JTI_LENGTH) {
      return this.#fail(`jti missing or longer than ${MAX_JTI_LENGTH} characters`);
    }
    // The memo's key is the thumbprint's own input: the required members, in order (RFC 7638 §3.3).
    const [ath, thumbprint] = await Promise.all([
      this.#aths.get(accessToken, sha256Base64Url),
      this.#thumbprints.get(JSON.stringify(jwk), () => calculateJwkThumbprint(jwk, "sha256")),
    ]);
    if (payload.ath !== ath) return this.#fail("ath does not match the access token");
    // Before any import: a key other than the token's costs nothing more.
    if (thumbprint !== context.jkt) return this.#fail("the proof's key is not the one the token is bound to");

    const key = await this.#key(jwk, alg, thumbprint);
    if (key instanceof KeyRefused) return this.#fail(key.message);
    const valid = await this.#runtime.verifier.verify(key, alg, proof, decoded.signingInputEnd);
    if (!valid) return this.#fail("signature verification failed");
    return { jkt: thumbprint, jti, iat, nonce: payload.nonce };
  }
}
