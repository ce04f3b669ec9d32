import { Buffer, isUtf8 } from "node:buffer";
import { type Base64UrlCodec, isBase64Url } from "../token/base64url.js";

const ALPHABET_ONLY = /^[A-Za-z0-9_-]*$/;

// Same acceptance as the portable `isBase64Url`, with the character scan done by the regex engine:
// the alphabet check runs on the slice, the length and trailing-bits rules on its last character.
function decode(input: string, start: number, end: number): Buffer | undefined {
  const segment = start === 0 && end === input.length ? input : input.slice(start, end);
  if (!ALPHABET_ONLY.test(segment)) return undefined;
  const remainder = segment.length % 4;
  if (remainder !== 0 && !isBase64Url(segment, segment.length - remainder, segment.length)) return undefined;
  return Buffer.from(segment, "base64url");
}

/**
 * Node's native base64url decoding, accepting exactly what the portable codec accepts (tested
 * side by side), so both verifiers see the same bytes.
 */
export const nodeBase64Url: Base64UrlCodec = {
  bytes: decode,
  text(input, start, end) {
    const bytes = decode(input, start, end);
    return bytes !== undefined && isUtf8(bytes) ? bytes.toString("utf8") : undefined;
  },
};
