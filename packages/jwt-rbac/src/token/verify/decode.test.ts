import { describe, expect, it } from "vitest";
import { nodeBase64Url } from "../../node/base64url.js";
import { portableBase64Url } from "./base64url.js";
import { decodeJws } from "./decode.js";

const b64 = (value: string) => Buffer.from(value).toString("base64url");
const header = b64('{"alg":"HS256","kid":"k1"}');
const payload = b64('{"sub":"u1"}');

describe.each([
  ["portable", portableBase64Url],
  ["node", nodeBase64Url],
])("decodeJws (%s base64url)", (_name, codec) => {
  it("splits a compact JWS, decodes header and payload, and leaves the signature to the verifier", () => {
    const token = `${header}.${payload}.${b64("sig")}`;
    const decoded = decodeJws(token, codec);
    expect(decoded).toMatchObject({ header: { alg: "HS256", kid: "k1" }, payload: { sub: "u1" } });
    if (decoded === "malformed") throw new Error("unreachable");
    expect(token.slice(0, decoded.signingInputEnd)).toBe(`${header}.${payload}`);
    expect(token.slice(decoded.signingInputEnd + 1)).toBe(b64("sig"));
  });

  it.each([
    ["no dot", header],
    ["empty header", `.${payload}.x`],
    ["header without alg", `${b64('{"typ":"JWT"}')}.${payload}.x`],
    ["alg not a string", `${b64('{"alg":1}')}.${payload}.x`],
    ["payload an array", `${header}.${b64("[]")}.x`],
    ["payload null", `${header}.${b64("null")}.x`],
    ["signature with padding", `${header}.${payload}.c2ln=`],
    ["signature with non-zero trailing bits", `${header}.${payload}.c2m`],
    ["signature in the base64 alphabet", `${header}.${payload}.c2l+`],
    ["five parts", `${header}.${payload}.x.y.z`],
  ])("refuses %s", (_label, token) => {
    expect(decodeJws(token, codec)).toBe("malformed");
  });

  it("decodes a usual header once, and a header over 1 KB every time (never held)", () => {
    const decodedHeader = (token: string) => (decodeJws(token, codec) as { header: object }).header;
    const usual = `${header}.${payload}.${b64("sig")}`;
    expect(decodedHeader(usual)).toBe(decodedHeader(`${header}.${b64('{"sub":"u2"}')}.${b64("sig")}`));
    const long = `${b64(JSON.stringify({ alg: "HS256", pad: "x".repeat(1024) }))}.${payload}.${b64("sig")}`;
    expect(decodedHeader(long)).not.toBe(decodedHeader(long));
    expect(decodedHeader(long)).toEqual(decodedHeader(long));
  });
});
