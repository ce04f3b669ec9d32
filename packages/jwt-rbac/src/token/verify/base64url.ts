/**
 * One rule for reading a token part, in both builds: the part must be canonical base64url (RFC 4648 §5:
 * its alphabet only, no padding, no impossible length, zero trailing bits, so no two strings decode to the
 * same bytes), checked here; the decoding itself is the runtime's own (`atob` here, `Buffer` in the Node
 * build). Text is UTF-8 decoded fatally, and a byte order mark is kept as U+FEFF, so a BOM before the
 * header or payload JSON makes `JSON.parse` refuse the token as malformed in both builds.
 *
 * Nothing here recurses or spreads arguments: a part of any size (up to `maxTokenLength`) costs linear time
 * and constant stack.
 */
const ALPHABET_ONLY = /^[A-Za-z0-9_-]*$/;
/** A byte above 0x7f in a binary string (one char per byte). */
const NON_ASCII = /[\u0080-\u00ff]/;
const SEXTET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Whether `segment` is canonical base64url: the one check every codec runs before decoding. */
export function isBase64Url(segment: string): boolean {
  const remainder = segment.length % 4;
  if (remainder === 1 || !ALPHABET_ONLY.test(segment)) return false;
  if (remainder === 0) return true;
  // Non-zero trailing bits would let two strings decode to the same bytes.
  const last = SEXTET.indexOf(segment.charAt(segment.length - 1));
  return (last & (remainder === 2 ? 0x0f : 0x03)) === 0;
}

/** base64url -> bytes / UTF-8 text of `input[start, end)`; undefined unless `isBase64Url` and (text) UTF-8. */
export interface Base64UrlCodec {
  bytes(input: string, start: number, end: number): Uint8Array | undefined;
  text(input: string, start: number, end: number): string | undefined;
}

/** `input[start, end)` without copying when it is the whole string. */
export function segmentOf(input: string, start: number, end: number): string {
  return start === 0 && end === input.length ? input : input.slice(start, end);
}

// `ignoreBOM: true` keeps a leading BOM in the text (the default would strip it), as Node's Buffer does.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The decoded bytes as a binary string (one char per byte), through the runtime's `atob`. */
function binaryOf(segment: string): string | undefined {
  if (!isBase64Url(segment)) return undefined;
  return atob(segment.replace(/-/g, "+").replace(/_/g, "/"));
}

function bytesOfBinary(binary: string): Uint8Array {
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Decodes canonical base64url (`undefined` otherwise); for JWK members as well as token parts. */
export function decodeBase64Url(input: string, start = 0, end = input.length): Uint8Array | undefined {
  const binary = binaryOf(segmentOf(input, start, end));
  return binary === undefined ? undefined : bytesOfBinary(binary);
}

/** The codec of every runtime with `atob` and `TextDecoder` (the WebCrypto build). */
export const portableBase64Url: Base64UrlCodec = {
  bytes: decodeBase64Url,
  text(input, start, end) {
    const binary = binaryOf(segmentOf(input, start, end));
    if (binary === undefined) return undefined;
    // ASCII bytes are their own text (the usual header and payload); anything else goes through UTF-8.
    if (!NON_ASCII.test(binary)) return binary;
    try {
      return utf8.decode(bytesOfBinary(binary));
    } catch {
      return undefined;
    }
  },
};
