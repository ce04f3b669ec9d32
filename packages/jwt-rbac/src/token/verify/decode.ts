import { getOrCreate } from "../../get-or-create.js";
import { type Base64UrlCodec, isBase64Url } from "./base64url.js";

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
  /**
   * Index of the second `.`: `token.slice(0, signingInputEnd)` is the JWS signing input, and the rest after the
   * dot the signature, checked canonical base64url here and decoded by the verifier that needs its bytes.
   */
  readonly signingInputEnd: number;
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

// Issuers sign with a handful of distinct headers ({alg, kid, typ}); decoding each once saves a base64
// decode and a JSON.parse per token. Bounded: cleared when full, so hostile headers cannot grow it. One per
// codec, so a header one codec accepted is never served to the other (both run side by side in tests).
const HEADER_CACHE_MAX = 64;
/** Real headers are a few dozen characters; a longer one is decoded every time, never held (up to 64 × 4 MB). */
const HEADER_CACHE_MAX_LENGTH = 1024;
/** A cached header with its segment: a copy, since a slice would keep its whole token (up to maxTokenLength) alive. */
interface KnownHeader {
  readonly codec: Base64UrlCodec;
  readonly segment: string;
  readonly header: JwsHeader;
}
const headerCaches = new Map<Base64UrlCodec, Map<string, KnownHeader>>();
/** The cached header found last, checked first: compared in place, with no slice made or hashed. */
let last: KnownHeader | undefined;

function decodeHeader(segment: string, codec: Base64UrlCodec): JwsHeader | undefined {
  const headerCache = getOrCreate(headerCaches, codec, () => new Map<string, KnownHeader>());
  const cached = headerCache.get(segment);
  if (cached !== undefined) {
    last = cached;
    return cached.header;
  }
  const header = parseObject(codec.text(segment, 0, segment.length));
  if (header === undefined || typeof header.alg !== "string") return undefined;
  if (header.kid !== undefined && typeof header.kid !== "string") return undefined;
  const frozen = Object.freeze(header) as JwsHeader;
  if (segment.length > HEADER_CACHE_MAX_LENGTH) return frozen;
  if (headerCache.size >= HEADER_CACHE_MAX) headerCache.clear();
  const copy = Array.from(segment).join("");
  last = { codec, segment: copy, header: frozen };
  headerCache.set(copy, last);
  return frozen;
}

/**
 * Splits and decodes a compact JWS (exactly three non-empty-header base64url parts, JSON object header
 * and payload). Verifies nothing; the one decoder shared by every verifier.
 */
export function decodeJws(token: string, codec: Base64UrlCodec): DecodedJws | DecodeFailure {
  const first = token.indexOf(".");
  if (first <= 0) return "malformed";
  const second = token.indexOf(".", first + 1);
  if (second < 0 || token.indexOf(".", second + 1) >= 0) return "malformed";

  const known = last;
  const header =
    known !== undefined &&
    known.codec === codec &&
    known.segment.length === first &&
    token.startsWith(known.segment)
      ? known.header
      : decodeHeader(token.slice(0, first), codec);
  if (header === undefined) return "malformed";
  const payload = parseObject(codec.text(token, first + 1, second));
  if (payload === undefined) return "malformed";
  if (!isBase64Url(token.slice(second + 1))) return "malformed";
  return { header, payload, signingInputEnd: second };
}
