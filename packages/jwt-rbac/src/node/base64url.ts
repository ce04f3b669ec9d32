import { Buffer, isUtf8 } from "node:buffer";
import { type Base64UrlCodec, isBase64Url, segmentOf } from "../token/verify/base64url.js";

function decode(input: string, start: number, end: number): Buffer | undefined {
  const segment = segmentOf(input, start, end);
  return isBase64Url(segment) ? Buffer.from(segment, "base64url") : undefined;
}

/**
 * Node's native base64url decoding behind the shared format check, so both builds see the same bytes and
 * text (see token/base64url.ts; `toString` keeps a BOM, as the portable codec does).
 */
export const nodeBase64Url: Base64UrlCodec = {
  bytes: decode,
  text(input, start, end) {
    const bytes = decode(input, start, end);
    if (bytes === undefined) return undefined;
    const text = bytes.toString("utf8");
    // Lenient decoding marks invalid UTF-8 with U+FFFD: only a text that has one needs the strict check.
    return !text.includes("\uFFFD") || isUtf8(bytes) ? text : undefined;
  },
};
