import { decodeBase64Url, decodeBase64UrlText } from "./base64url.js";

/** The protected header fields the verifier looks at. Everything else (jwk, jku, x5u, x5c, ...) is ignored. */
export interface JwsHeader {
  readonly alg: string;
  readonly kid?: string;
  readonly crit?: unknown;
  readonly [name: string]: unknown;
}

export interface DecodedJws {
  readonly header: JwsHeader;
  readonly payload: Record<string, unknown>;
  /** Index of the second `.`: `token.slice(0, signingInputEnd)` is the JWS signing input. */
  readonly signingInputEnd: number;
  readonly signature: Uint8Array;
}

export type DecodeFailure = "malformed";

function parseObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * Splits and decodes a compact JWS (exactly three non-empty-header base64url parts, JSON object header
 * and payload). Verifies nothing; the one decoder shared by every verifier.
 */
export function decodeJws(token: string): DecodedJws | DecodeFailure {
  const first = token.indexOf(".");
  if (first <= 0) return "malformed";
  const second = token.indexOf(".", first + 1);
  if (second < 0 || token.indexOf(".", second + 1) >= 0) return "malformed";

  const header = parseObject(decodeBase64UrlText(token, 0, first));
  if (header === undefined || typeof header.alg !== "string") return "malformed";
  if (header.kid !== undefined && typeof header.kid !== "string") return "malformed";
  const payload = parseObject(decodeBase64UrlText(token, first + 1, second));
  if (payload === undefined) return "malformed";
  const signature = decodeBase64Url(token, second + 1);
  if (signature === undefined) return "malformed";
  return { header: header as JwsHeader, payload, signingInputEnd: second, signature };
}
