import { beforeAll, describe, expect, it } from "vitest";
import { sign, type TestKeys, testKeys } from "../test/fixtures/keys.js";
import { createJwtAuthOn } from "./auth.js";
import { runtime as nodeRuntime } from "./node/runtime.js";
import { runtime as webRuntime } from "./runtime.js";

let keys: TestKeys;
beforeAll(async () => {
  keys = await testKeys();
});

function request(token: string | undefined) {
  return {
    method: "GET",
    path: "/x",
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  };
}

describe("authenticateNow: the same answers as authenticate(), without a promise when none is needed", () => {
  it("answers directly with the node:crypto verifier once the keys are loaded", async () => {
    const auth = createJwtAuthOn(nodeRuntime, { algorithm: "HS256", verificationKeys: [keys.hsSecret] });
    await auth.ready;
    const token = await sign({ sub: "u1" }, "HS256", keys.hsSecret);
    const now = auth.authenticateNow(request(token));
    expect(now).not.toBeInstanceOf(Promise);
    expect(now).toMatchObject({ ok: true, state: { userId: "u1" } });
    expect(now).toEqual(await auth.authenticate(request(token)));
  });

  it("answers a refusal directly", async () => {
    const auth = createJwtAuthOn(webRuntime, { algorithm: "HS256", verificationKeys: [keys.hsSecret] });
    await auth.ready;
    const refused = auth.authenticateNow(request(undefined));
    expect(refused).not.toBeInstanceOf(Promise);
    expect(refused).toMatchObject({ ok: false, error: { reason: "token_missing", status: 401 } });
    expect(refused).toEqual(await auth.authenticate(request(undefined)));
  });

  it("returns a promise while WebCrypto verifies, and answers a cached token directly", async () => {
    const auth = createJwtAuthOn(webRuntime, { algorithm: "HS256", verificationKeys: [keys.hsSecret] });
    await auth.ready;
    const token = await sign({ sub: "u2" }, "HS256", keys.hsSecret);
    const first = auth.authenticateNow(request(token));
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toMatchObject({ ok: true, state: { userId: "u2" } });
    // Cached from its second sighting on (the first only notes it), so this verifies again.
    const second = auth.authenticateNow(request(token));
    expect(second).toBeInstanceOf(Promise);
    expect(await second).toMatchObject({ ok: true, state: { userId: "u2" } });
    const cached = auth.authenticateNow(request(token));
    expect(cached).not.toBeInstanceOf(Promise);
    expect(cached).toMatchObject({ ok: true, state: { userId: "u2" } });
  });
});

describe("excluded paths", () => {
  async function anonymousFor(
    options: { caseSensitiveRoutes?: boolean; excludedRoutePaths?: string[] },
    path: string,
  ) {
    const auth = createJwtAuthOn(nodeRuntime, {
      algorithm: "HS256",
      verificationKeys: [keys.hsSecret],
      ...options,
    });
    await auth.ready;
    const result = await auth.authenticate({ method: "POST", path, headers: {} });
    return result.ok && !result.state.authenticated;
  }

  it("matches the canonical path, by the routes' case rule", async () => {
    const excludedRoutePaths = ["/health", "/", "/public/**", "/files/*"];
    for (const path of [
      "/health",
      "/health/",
      "/health?probe=1",
      "/heal%74h",
      "/",
      "/public",
      "/public/a/b",
      "/files/x",
    ]) {
      expect(await anonymousFor({ excludedRoutePaths }, path), path).toBe(true);
    }
    for (const path of [
      "/healthz",
      "/health/x",
      "//health",
      "/files",
      "/files/x/y",
      "/HEALTH",
      "",
      "/x/../health",
    ]) {
      expect(await anonymousFor({ excludedRoutePaths }, path), path).toBe(false);
    }
    expect(await anonymousFor({ excludedRoutePaths, caseSensitiveRoutes: false }, "/HEALTH/")).toBe(true);
    expect(await anonymousFor({ excludedRoutePaths: ["/Docs"], caseSensitiveRoutes: false }, "/docs")).toBe(
      true,
    );
    expect(await anonymousFor({ excludedRoutePaths: ["/Docs"] }, "/docs")).toBe(false);
  });

  it("excludes the default paths", async () => {
    expect(await anonymousFor({}, "/openapi.json")).toBe(true);
    expect(await anonymousFor({}, "/docs/oauth2-redirect")).toBe(true);
    expect(await anonymousFor({}, "/agents")).toBe(false);
  });
});
