import type { JWK } from "jose";
import { describe, expect, it } from "vitest";
import { recordingLogger } from "../../../common/test/recording-logger.js";
import { jwksKeyLabel, WeakKeyFilter } from "./weak-keys.js";

// A 2048-bit modulus pattern (not a real key: e = 1 is what is refused).
const weak = (kid: string): JWK => ({ kty: "RSA", kid, n: `w${"Q".repeat(341)}`, e: "AQ" });

function filterWithLog() {
  const { logger, warnings } = recordingLogger();
  return { warnings, filter: new WeakKeyFilter(logger) };
}

describe("WeakKeyFilter", () => {
  it("warns once per key, also when a refetched JWKS brings the same key as a new object", () => {
    const { warnings, filter } = filterWithLog();
    expect(filter.skip(weak("a"), "JWKS key #1", "remote JWKS")).toBe(true);
    expect(filter.skip({ ...weak("a") }, "JWKS key #1", "remote JWKS")).toBe(true);
    expect(filter.skip(weak("b"), "JWKS key #2", "remote JWKS")).toBe(true);
    expect(warnings).toEqual([
      "jwt-rbac: remote JWKS: JWKS key #1 skipped: its RSA public exponent is below 3",
      "jwt-rbac: remote JWKS: JWKS key #2 skipped: its RSA public exponent is below 3",
    ]);
  });

  it("keeps keys it finds nothing wrong with, silently", () => {
    const { warnings, filter } = filterWithLog();
    expect(filter.skip({ kty: "oct", k: "c2VjcmV0" }, "JWKS key #1", "JWKS")).toBe(false);
    expect(warnings).toEqual([]);
  });
});

describe("jwksKeyLabel", () => {
  it("names the position, and the kid quoted and bounded so a log line stays one short line", () => {
    expect(jwksKeyLabel({ kty: "RSA" }, 0)).toBe("JWKS key #1");
    expect(jwksKeyLabel({ kty: "RSA", kid: "k1" }, 2)).toBe('JWKS key #3 (kid "k1")');
    const hostile = jwksKeyLabel({ kty: "RSA", kid: `x\n${"y".repeat(500)}` }, 0);
    expect(hostile).not.toContain("\n");
    expect(hostile.length).toBeLessThan(100);
  });
});
