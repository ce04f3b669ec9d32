import { createHmac, createVerify, type KeyObject, verify } from "node:crypto";
import type { Alg } from "./keys.js";

/**
 * The cheapest node:crypto check of a signature over the signing input with a KeyObject made once: the HMAC's
 * base64url compared in constant time with the token's (no decode), a Verify stream for RSA and ECDSA (cheaper
 * than the one-shot `verify` on Node 20; see bench/notes/profiles.md), the one-shot for Ed25519 (the only form it
 * has). The signature only — no header or claims parsing; what a proof check costs at least.
 */
export function createSignatureVerifier(alg: Alg, key: KeyObject): (token: string) => boolean {
  return (token) => {
    const dot = token.lastIndexOf(".");
    const input = token.slice(0, dot);
    if (alg === "HS256") {
      const expected = createHmac("sha256", key).update(input).digest("base64url");
      const actual = token.slice(dot + 1);
      if (expected.length !== actual.length) return false;
      let difference = 0;
      for (let i = 0; i < expected.length; i++) difference |= expected.charCodeAt(i) ^ actual.charCodeAt(i);
      return difference === 0;
    }
    const signature = Buffer.from(token.slice(dot + 1), "base64url");
    switch (alg) {
      case "RS256":
        return createVerify("sha256").update(input, "latin1").verify(key, signature);
      case "ES256":
        return createVerify("sha256")
          .update(input, "latin1")
          .verify({ key, dsaEncoding: "ieee-p1363" }, signature);
      case "EdDSA":
        return verify(null, Buffer.from(input, "latin1"), key, signature);
    }
  };
}

/**
 * The floor the uncached-verification targets compare with: signature + decode + alg/exp check. Both parts base64url-decoded and parsed, the
 * header's `alg` compared, `exp` checked, the signature by `createSignatureVerifier`; nothing a real verifier may
 * skip is left out, and nothing else is done, so every real verifier costs at least this.
 */
export function createFloorVerifier(alg: Alg, key: KeyObject): (token: string) => boolean {
  const checkSignature = createSignatureVerifier(alg, key);
  return (token) => {
    const first = token.indexOf(".");
    const second = token.indexOf(".", first + 1);
    const header = JSON.parse(Buffer.from(token.slice(0, first), "base64url").toString("utf8")) as {
      alg?: unknown;
    };
    if (header.alg !== alg) return false;
    const claims = JSON.parse(Buffer.from(token.slice(first + 1, second), "base64url").toString("utf8")) as {
      exp?: unknown;
    };
    if (typeof claims.exp !== "number" || claims.exp * 1000 <= Date.now()) return false;
    return checkSignature(token);
  };
}

export interface MinimalClaims {
  sub?: unknown;
  exp?: unknown;
  scopes?: unknown;
}

/**
 * The smallest verifier a careful person would hand-write for one route: header algorithm pinned, signature by the
 * floor, payload parsed, `exp` checked, one scope required. What "Hono + a minimal node:crypto verifier" runs.
 */
export function createMinimalVerifier(
  alg: Alg,
  key: KeyObject,
  scope: string,
): (authorization: string | undefined) => MinimalClaims | null {
  const checkSignature = createSignatureVerifier(alg, key);
  const expectedHeader = Buffer.from(JSON.stringify({ alg, typ: "JWT" })).toString("base64url");
  return (authorization) => {
    if (authorization === undefined || !authorization.startsWith("Bearer ")) return null;
    const token = authorization.slice(7);
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== expectedHeader || !checkSignature(token)) return null;
    let claims: MinimalClaims;
    try {
      claims = JSON.parse(Buffer.from(parts[1] ?? "", "base64url").toString("utf8")) as MinimalClaims;
    } catch {
      return null;
    }
    if (typeof claims.exp !== "number" || claims.exp * 1000 <= Date.now()) return null;
    if (!Array.isArray(claims.scopes) || !claims.scopes.includes(scope)) return null;
    return claims;
  };
}
