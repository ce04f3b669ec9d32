import { describe, expect, it } from "vitest";
import { nodeBase64Url } from "../node/base64url.js";
import { decodeBase64Url, decodeBase64UrlText, portableBase64Url } from "./base64url.js";

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

describe("codecs agree", () => {
  const inputs = [
    "",
    "QQ",
    "QUI",
    "QUJD",
    "aGVsbG8",
    "aGVsbG9",
    "aGVsbG8=",
    "a+/b",
    "aGVsb",
    "w6k",
    "__-_",
    "_w",
    "__8",
    "é",
  ];
  it.each(inputs)("%j", (input) => {
    for (const method of ["bytes", "text"] as const) {
      const portable = portableBase64Url[method](input, 0, input.length);
      const native = nodeBase64Url[method](input, 0, input.length);
      expect(
        native === undefined
          ? undefined
          : method === "bytes"
            ? Uint8Array.from(native as Uint8Array)
            : native,
      ).toEqual(portable);
    }
  });
});
