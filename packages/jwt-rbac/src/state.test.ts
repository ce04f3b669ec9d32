import { describe, expect, it } from "vitest";
import { anonymousState, authenticatedState, scopesFrom } from "./state.js";

const names = {
  scopesClaim: "scopes",
  userIdClaim: "sub",
  sessionIdClaim: "session_id",
  audienceClaim: "aud",
  dependenciesClaims: ["tenant", "missing"],
  sessionStateClaims: ["cart"],
};

describe("auth state", () => {
  it("reads scopes from an array or a space-separated string, nothing else", () => {
    expect(scopesFrom(["a:b", 3, "c:d"])).toEqual(["a:b", "c:d"]);
    expect(scopesFrom(" a:b  c:d ")).toEqual(["a:b", "c:d"]);
    // U+0020 only (RFC 6749 §3.3): a tab, NBSP, line separator or BOM is part of its scope.
    expect(scopesFrom("a:b\tc:d e\u00a0f:g\u2028h:i \ufeffj:k")).toEqual([
      "a:b\tc:d",
      "e\u00a0f:g\u2028h:i",
      "\ufeffj:k",
    ]);
    expect(scopesFrom(["a:b c:d"])).toEqual(["a:b c:d"]);
    expect(scopesFrom({ a: 1 })).toEqual([]);
    expect(scopesFrom(undefined)).toEqual([]);
  });

  it("maps claims to the state; non-string ids become null", () => {
    const state = authenticatedState(
      "t",
      { sub: 7, session_id: "s", aud: [1, "p1"], tenant: "x", cart: [] },
      names,
      true,
    );
    expect(state).toMatchObject({
      authenticated: true,
      userId: null,
      sessionId: "s",
      audience: "p1",
      token: "t",
      authorizationEnabled: true,
      dependencies: { tenant: "x" },
      sessionState: { cart: [] },
    });
    expect(state.accessibleResourceIds.size).toBe(0);
  });

  it("has an anonymous state for skipped requests", () => {
    expect(anonymousState(false)).toMatchObject({
      authenticated: false,
      token: null,
      claims: null,
      scopes: [],
    });
  });
});
