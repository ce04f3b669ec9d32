import { describe, expect, it } from "vitest";
import { TokenSource } from "../options.js";
import { readCookie, readHeader, resolveToken } from "./resolve.js";

const config = (tokenSource: TokenSource) => ({
  tokenSource,
  tokenHeaderKey: "authorization",
  tokenHeaderName: "Authorization",
  cookieName: "access_token",
});

describe("token resolution", () => {
  it("reads headers case-insensitively from records and Headers", () => {
    expect(readHeader({ Authorization: "Bearer x" }, "authorization")).toBe("Bearer x");
    expect(readHeader(new Headers({ AUTHORIZATION: "Bearer y" }), "authorization")).toBe("Bearer y");
    expect(readHeader({ cookie: ["a=1", "b=2"] }, "cookie")).toBe("a=1, b=2");
  });

  it("reads one cookie from a raw Cookie header", () => {
    expect(readCookie("a=1; access_token=tok; b=2", "access_token")).toBe("tok");
    expect(readCookie('access_token="tok"', "access_token")).toBe("tok");
    expect(readCookie("xaccess_token=nope; access_token=yes", "access_token")).toBe("yes");
    expect(readCookie("a=1", "access_token")).toBeUndefined();
  });

  it("takes the header first with BOTH, the cookie as fallback", () => {
    expect(
      resolveToken(
        config(TokenSource.BOTH),
        { authorization: "Bearer h", cookie: "access_token=c" },
        undefined,
      ),
    ).toBe("h");
    expect(resolveToken(config(TokenSource.BOTH), { cookie: "access_token=c" }, undefined)).toBe("c");
    expect(resolveToken(config(TokenSource.BOTH), {}, { access_token: "parsed" })).toBe("parsed");
  });

  it("ignores the cookie with HEADER and the header with COOKIE", () => {
    expect(resolveToken(config(TokenSource.HEADER), { cookie: "access_token=c" }, undefined)).toMatchObject({
      reason: "token_missing",
    });
    expect(resolveToken(config(TokenSource.COOKIE), { authorization: "Bearer h" }, undefined)).toMatchObject({
      reason: "token_missing",
    });
  });

  it.each(["Basic abc", "Bearer", "Bearerabc", "Token abc", ""])("refuses the header %j", (value) => {
    expect(resolveToken(config(TokenSource.HEADER), { authorization: value }, undefined)).toMatchObject({
      status: 401,
    });
  });

  it("accepts the scheme in any case", () => {
    expect(resolveToken(config(TokenSource.HEADER), { authorization: "bearer  t " }, undefined)).toBe("t");
  });
});
