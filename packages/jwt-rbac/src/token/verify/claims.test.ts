import { describe, expect, it } from "vitest";
import { type ClaimRules, checkClaims } from "./claims.js";

const NOW = 1_700_000_000;
const rules: ClaimRules = {
  clockTolerance: 10,
  audience: undefined,
  audienceClaim: "aud",
  issuer: undefined,
};

function reasonOf(payload: Record<string, unknown>, extra: Partial<ClaimRules> = {}) {
  return checkClaims(payload, { ...rules, ...extra }, NOW)?.reason;
}

describe("checkClaims", () => {
  it("accepts a token without time claims and a valid one", () => {
    expect(reasonOf({})).toBeUndefined();
    expect(reasonOf({ exp: NOW + 60, nbf: NOW - 60, iat: NOW - 60 })).toBeUndefined();
  });

  it.each([
    ["exp as a string", { exp: String(NOW + 60) }],
    ["exp as Infinity (1e400)", { exp: Number.POSITIVE_INFINITY }],
    ["exp as NaN", { exp: Number.NaN }],
    ["exp as null", { exp: null }],
    ["nbf as a boolean", { nbf: true }],
    ["iat as an object", { iat: {} }],
  ])("refuses %s", (_, payload) => {
    expect(reasonOf(payload)).toBe("invalid_claim");
  });

  it("applies the clock tolerance to exp, nbf and iat", () => {
    expect(reasonOf({ exp: NOW - 9 })).toBeUndefined();
    expect(reasonOf({ exp: NOW - 10 })).toBe("expired");
    expect(reasonOf({ exp: -1 })).toBe("expired");
    expect(reasonOf({ nbf: NOW + 10 })).toBeUndefined();
    expect(reasonOf({ nbf: NOW + 11 })).toBe("not_yet_valid");
    expect(reasonOf({ iat: NOW + 11 })).toBe("issued_in_future");
    expect(reasonOf({ exp: NOW - 5 }, { clockTolerance: 0 })).toBe("expired");
  });

  it("checks the audience claim by name, as a string or an array", () => {
    const audience = new Set(["p1", "p2"]);
    expect(reasonOf({ aud: "p1" }, { audience })).toBeUndefined();
    expect(reasonOf({ aud: ["x", "p2"] }, { audience })).toBeUndefined();
    expect(reasonOf({ aud: "x" }, { audience })).toBe("invalid_audience");
    expect(reasonOf({}, { audience })).toBe("invalid_audience");
    expect(reasonOf({ aud: [1, 2] }, { audience })).toBe("invalid_audience");
    expect(reasonOf({ platform: "p1" }, { audience, audienceClaim: "platform" })).toBeUndefined();
  });

  it("checks the issuer", () => {
    const issuer = new Set(["https://issuer.example"]);
    expect(reasonOf({ iss: "https://issuer.example" }, { issuer })).toBeUndefined();
    expect(reasonOf({ iss: "https://evil.example" }, { issuer })).toBe("invalid_issuer");
    expect(reasonOf({}, { issuer })).toBe("invalid_issuer");
  });
});
