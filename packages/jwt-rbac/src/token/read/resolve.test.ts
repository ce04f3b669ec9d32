import { describe, expect, it } from "vitest";
import type { AuthError } from "../../errors.js";
import { TokenSource } from "../../options.js";
import { readHeader } from "./headers.js";
import { REPEATED_COOKIE, readCookie, resolveToken } from "./resolve.js";

const config = (tokenSource: TokenSource) => ({
  tokenSource,
  tokenHeaderKey: "authorization",
  tokenHeaderName: "Authorization",
  cookieName: "access_token",
  allowedOrigins: undefined,
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
    // Only SP and HTAB are trimmed: NBSP and U+FEFF belong to the name or the value.
    expect(readCookie("\u00a0access_token=x", "access_token")).toBeUndefined();
    expect(readCookie("access_token=\ufeffx\u00a0", "access_token")).toBe("\ufeffx\u00a0");
    expect(
      resolveToken(config(TokenSource.HEADER), "GET", { headers: { authorization: "Bearer \u00a0t\t" } }),
    ).toBe("\u00a0t");
  });

  it("refuses a cookie named twice, and a token header sent twice (joined with a comma)", () => {
    expect(readCookie("access_token=a; access_token=a", "access_token")).toBe(REPEATED_COOKIE);
    expect(readCookie("access_token=; x=1; access_token=a", "access_token")).toBe(REPEATED_COOKIE);
    for (const headers of [
      { cookie: "access_token=a; access_token=b" },
      { authorization: "Bearer a, Bearer b" },
      { authorization: ["Bearer a", "Bearer a"] },
      new Headers([
        ["authorization", "Bearer a"],
        ["authorization", "Bearer a"],
      ]),
    ]) {
      const refused = resolveToken(config(TokenSource.BOTH), "GET", { headers });
      expect(refused).toMatchObject({ status: 401, reason: "repeated_credentials" });
      expect((refused as AuthError).wwwAuthenticate).toContain('error="invalid_request"');
    }
  });

  it("takes the header first with BOTH, the cookie as fallback", () => {
    expect(
      resolveToken(config(TokenSource.BOTH), "GET", {
        headers: { authorization: "Bearer h", cookie: "access_token=c" },
      }),
    ).toBe("h");
    expect(resolveToken(config(TokenSource.BOTH), "GET", { headers: { cookie: "access_token=c" } })).toBe(
      "c",
    );
    expect(
      resolveToken(config(TokenSource.BOTH), "GET", { headers: {}, cookies: { access_token: "parsed" } }),
    ).toBe("parsed");
  });

  it("ignores the cookie with HEADER and the header with COOKIE", () => {
    expect(
      resolveToken(config(TokenSource.HEADER), "GET", { headers: { cookie: "access_token=c" } }),
    ).toMatchObject({
      reason: "token_missing",
    });
    expect(
      resolveToken(config(TokenSource.COOKIE), "GET", { headers: { authorization: "Bearer h" } }),
    ).toMatchObject({
      reason: "token_missing",
    });
  });

  it.each(["Basic abc", "Bearer", "Bearerabc", "Token abc", ""])("refuses the header %j", (value) => {
    expect(
      resolveToken(config(TokenSource.HEADER), "GET", { headers: { authorization: value } }),
    ).toMatchObject({
      status: 401,
    });
  });

  it("accepts the scheme in any case", () => {
    expect(
      resolveToken(config(TokenSource.HEADER), "GET", { headers: { authorization: "bearer  t " } }),
    ).toBe("t");
  });
});
