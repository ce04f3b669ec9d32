import { describe, expect, it } from "vitest";
import { nodeBase64Url } from "../../node/base64url.js";
import { decodeBase64Url, portableBase64Url } from "./base64url.js";

const decodeBase64UrlText = portableBase64Url.text;

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

  it("keeps a byte order mark, so JSON.parse refuses it (both builds)", () => {
    const bom = encode(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d));
    for (const codec of [portableBase64Url, nodeBase64Url]) {
      expect(codec.text(bom, 0, bom.length)).toBe("\ufeff{}");
    }
  });

  it("decodes a 4 MB part without growing the stack", () => {
    const big = encode(new Uint8Array(3 * 1024 * 1024).fill(0x41));
    expect(decodeBase64UrlText(big, 0, big.length)?.length).toBe(3 * 1024 * 1024);
    const wide = encode(new TextEncoder().encode("é".repeat(1024 * 1024)));
    expect(decodeBase64UrlText(wide, 0, wide.length)?.length).toBe(1024 * 1024);
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
    "77u_e30",
    "7aCA",
    "wMA",
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
