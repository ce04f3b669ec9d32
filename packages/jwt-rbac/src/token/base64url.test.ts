import { describe, expect, it } from "vitest";
import { decodeBase64Url, decodeBase64UrlText } from "./base64url.js";

const encode = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

describe("decodeBase64Url", () => {
  it("round-trips every length and byte value", () => {
    for (let length = 0; length < 70; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length * 11) % 256);
      expect(decodeBase64Url(encode(bytes))).toEqual(bytes);
    }
  });

  it("decodes a slice of the input", () => {
    expect(decodeBase64UrlText("xx.aGVsbG8.yy", 3, 10)).toBe("hello");
  });

  it.each([
    ["padding", "aGVsbG8="],
    ["standard base64 alphabet", "a+/b"],
    ["whitespace", "aGVs bG8"],
    ["impossible length", "aGVsb"],
    ["non-ASCII", "aGVsbé8"],
    ["non-zero trailing bits", "aGVsbG9"],
  ])("rejects %s", (_, input) => {
    expect(decodeBase64Url(input)).toBeUndefined();
  });

  it("decodes UTF-8 text and rejects invalid UTF-8", () => {
    const text = encode(new TextEncoder().encode('{"n":"é"}'));
    expect(decodeBase64UrlText(text, 0, text.length)).toBe('{"n":"é"}');
    const bad = encode(Uint8Array.of(0xff, 0xfe));
    expect(decodeBase64UrlText(bad, 0, bad.length)).toBeUndefined();
  });
});
