import { createHmac, type KeyObject, timingSafeEqual, verify } from "node:crypto";
import type { Alg } from "./keys.js";

/**
 * The physical floor on Node: one node:crypto one-shot over the signing input with a KeyObject made once.
 * Checks the signature only — no header or claims parsing — so every real verifier costs at least this.
 */
export function createFloorVerifier(alg: Alg, key: KeyObject): (token: string) => boolean {
  return (token) => {
    const dot = token.lastIndexOf(".");
    const input = Buffer.from(token.slice(0, dot));
    const signature = Buffer.from(token.slice(dot + 1), "base64url");
    switch (alg) {
      case "HS256": {
        const expected = createHmac("sha256", key).update(input).digest();
        return expected.length === signature.length && timingSafeEqual(expected, signature);
      }
      case "RS256":
        return verify("sha256", input, key, signature);
      case "ES256":
        return verify("sha256", input, { key, dsaEncoding: "ieee-p1363" }, signature);
      case "EdDSA":
        return verify(null, input, key, signature);
    }
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
  const checkSignature = createFloorVerifier(alg, key);
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
