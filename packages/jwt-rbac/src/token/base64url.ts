// Strict base64url (RFC 4648 §5, no padding): any other byte makes the input invalid.
const INVALID = 255;
const TABLE = new Uint8Array(128).fill(INVALID);
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
for (let i = 0; i < ALPHABET.length; i++) TABLE[ALPHABET.charCodeAt(i)] = i;

function sextet(input: string, index: number): number {
  const code = input.charCodeAt(index);
  return code < 128 ? (TABLE[code] as number) : INVALID;
}

/**
 * Decodes `input[start, end)`; `undefined` when it is not canonical base64url
 * (bad character, impossible length, or non-zero trailing bits).
 */
export function decodeBase64Url(input: string, start = 0, end = input.length): Uint8Array | undefined {
  const length = end - start;
  const remainder = length % 4;
  if (remainder === 1) return undefined;
  const out = new Uint8Array(((length * 3) >> 2) | 0);
  let o = 0;
  let i = start;
  const fullEnd = end - remainder;
  while (i < fullEnd) {
    const a = sextet(input, i);
    const b = sextet(input, i + 1);
    const c = sextet(input, i + 2);
    const d = sextet(input, i + 3);
    // Valid sextets are <= 63, INVALID is 255: one test covers all four.
    if ((a | b | c | d) > 63) return undefined;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 0xff;
    out[o++] = n & 0xff;
    i += 4;
  }
  if (remainder === 2) {
    const a = sextet(input, i);
    const b = sextet(input, i + 1);
    if ((a | b) > 63 || (b & 0x0f) !== 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
  } else if (remainder === 3) {
    const a = sextet(input, i);
    const b = sextet(input, i + 1);
    const c = sextet(input, i + 2);
    if ((a | b | c) > 63 || (c & 0x03) !== 0) return undefined;
    const n = (a << 10) | (b << 4) | (c >> 2);
    out[o++] = n >> 8;
    out[o++] = n & 0xff;
  }
  return out;
}

/** Whether `input[start, end)` is canonical base64url, the check every codec runs first. */
export function isBase64Url(input: string, start: number, end: number): boolean {
  const remainder = (end - start) % 4;
  if (remainder === 1) return false;
  let last = 0;
  for (let i = start; i < end; i++) {
    last = sextet(input, i);
    if (last > 63) return false;
  }
  // Non-zero trailing bits would let two strings decode to the same bytes.
  if (remainder === 2) return (last & 0x0f) === 0;
  if (remainder === 3) return (last & 0x03) === 0;
  return true;
}

/** base64url -> bytes / UTF-8 text. Runtimes may bring a native one; all must accept exactly `isBase64Url`. */
export interface Base64UrlCodec {
  bytes(input: string, start: number, end: number): Uint8Array | undefined;
  text(input: string, start: number, end: number): string | undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes base64url to a UTF-8 string; `undefined` on bad base64url or bad UTF-8. */
export function decodeBase64UrlText(input: string, start: number, end: number): string | undefined {
  const bytes = decodeBase64Url(input, start, end);
  if (bytes === undefined) return undefined;
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    if ((bytes[i] as number) > 0x7f) {
      ascii = false;
      break;
    }
  }
  // Token parts are small (bounded by maxTokenLength), so the argument spread stays far below engine limits.
  if (ascii) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export const portableBase64Url: Base64UrlCodec = { bytes: decodeBase64Url, text: decodeBase64UrlText };
