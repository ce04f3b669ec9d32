import { describe, expect, it } from "vitest";
import {
  AuthError,
  insufficientScopeError,
  invalidTokenError,
  isAuthError,
  missingTokenError,
} from "./errors.js";

describe("AuthError", () => {
  it("builds the body and the RFC 6750 challenge once", () => {
    const error = invalidTokenError("expired", "Token has expired");
    expect(error).toBeInstanceOf(AuthError);
    expect(error.status).toBe(401);
    expect(JSON.parse(error.body)).toEqual({ detail: "Token has expired", error_code: "UNAUTHENTICATED" });
    expect(error.headers).toEqual({
      "Content-Type": "application/json",
      "WWW-Authenticate":
        'Bearer realm="platform", error="invalid_token", error_description="Token has expired"',
    });
    expect(missingTokenError("Authorization header missing").wwwAuthenticate).toBe('Bearer realm="platform"');
  });

  it("names the required scopes", () => {
    const error = insufficientScopeError(["a:b", "c:d"]);
    expect(error.status).toBe(403);
    expect(error.detail).toBe("Insufficient permissions. Required scope(s): a:b, c:d");
    expect(error.wwwAuthenticate).toContain('scope="a:b c:d"');
  });

  it("escapes quotes in challenge parameters", () => {
    expect(invalidTokenError("malformed", 'say "hi"').wwwAuthenticate).toContain(
      'error_description="say \\"hi\\""',
    );
  });

  it("recognises AuthErrors from another copy of the package", () => {
    const foreign = Object.assign(new Error("x"), { name: "AuthError", body: "{}" });
    expect(isAuthError(foreign)).toBe(true);
    expect(isAuthError(new Error("x"))).toBe(false);
  });
});
