import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type StubServer, startStubServer } from "@agent-platform/test-support/stub-server";
import type { JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { ConfigError } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/signature-types.js";
import { craft, rsaSigner } from "./fixtures/hostile-tokens.js";
import { NOW_S, selfSignedCertificate, sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { type RsaFixture, rocaKeyPair, rsaKeyPair, withExponent } from "./fixtures/weak-keys.js";

// Weak keys are refused (configured keys) or skipped (JWKS keys) identically by both builds.
const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];

let keys: TestKeys;
let rsa1024: RsaFixture;
let roca: RsaFixture;
let certificate1024: string;
let jwksServer: StubServer;
let jwksUrl: string;

beforeAll(async () => {
  [keys, rsa1024, roca] = await Promise.all([testKeys(), rsaKeyPair(1024), rocaKeyPair()]);
  certificate1024 = (await selfSignedCertificate(rsa1024)).pem;
  jwksServer = await startStubServer();
  jwksUrl = `${jwksServer.url}/jwks.json`;
});
afterAll(() => jwksServer.close());

async function refusal(runtime: Runtime, options: JwtRbacOptions): Promise<unknown> {
  return createJwtAuthOn(runtime, { cache: false, ...options }).ready.then(
    () => "accepted",
    (error: unknown) => error,
  );
}

async function outcome(runtime: Runtime, options: JwtRbacOptions, token: string) {
  const auth = createJwtAuthOn(runtime, { cache: false, ...options });
  await auth.ready;
  const result = await auth.authenticate({
    method: "GET",
    path: "/x",
    headers: { authorization: `Bearer ${token}` },
  });
  return result.ok ? { ok: true, userId: result.state.userId } : { ok: false, reason: result.error.reason };
}

/** An RS256 token signed with any RSA key (jose itself will not sign with a 1024-bit one). */
function rs256(key: RsaFixture, sub: string, kid?: string): string {
  const header = kid === undefined ? { alg: "RS256" } : { alg: "RS256", kid };
  return craft(header, JSON.stringify({ sub, exp: NOW_S() + 300 }), rsaSigner(key.privateKey));
}

describe.each(RUNTIMES)("%s", (_name, runtime) => {
  describe("a configured weak key is a configuration error naming the key", () => {
    const cases: [string, () => string, RegExp][] = [
      ["1024-bit PEM SPKI", () => rsa1024.publicPem, /RSA modulus has 1024 bits, fewer than 2048/],
      ["1024-bit X.509 certificate", () => certificate1024, /RSA modulus has 1024 bits, fewer than 2048/],
      ["1024-bit JWK", () => JSON.stringify(rsa1024.publicJwk), /RSA modulus has 1024 bits/],
      ["JWK with e = 1", () => JSON.stringify(withExponent(keys.rs256.publicJwk, 1n)), /exponent is below 3/],
      [
        "JWK with e = 65536",
        () => JSON.stringify(withExponent(keys.rs256.publicJwk, 65536n)),
        /exponent is even/,
      ],
      ["ROCA PEM SPKI", () => roca.publicPem, /ROCA fingerprint/],
    ];
    it.each(cases)("%s", async (_label, key, reason) => {
      const error = await refusal(runtime, {
        algorithms: ["RS256", "PS256"],
        verificationKeys: [keys.rs256.publicPem, key()],
      });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ code: "CONFIG_INVALID", component: "jwt-rbac" });
      expect((error as Error).message).toMatch(/^verification key #2 is refused: /);
      expect((error as Error).message).toMatch(reason);
    });

    it("accepts e = 3 and a 2048-bit certificate (the minimums are not exceeded)", async () => {
      const options = {
        verificationKeys: [keys.certificatePem, JSON.stringify(withExponent(keys.rs256.publicJwk, 3n))],
      };
      expect(await refusal(runtime, options)).toBe("accepted");
    });
  });

  describe("a weak JWKS key is skipped with one warning; the others still verify", () => {
    const jwks = () => ({
      keys: [
        { ...rsa1024.publicJwk, kid: "old" },
        { ...roca.publicJwk, kid: "roca" },
        { ...withExponent(keys.rs256.publicJwk, 1n), kid: "e1" },
        { ...rsa1024.publicJwk, kid: "old" },
        { ...keys.rs256.publicJwk, kid: "good" },
      ],
    });

    function expectWarnings(warnings: string[], source: string) {
      expect(warnings).toEqual([
        `jwt-rbac: ${source}: JWKS key #1 (kid "old") skipped: its RSA modulus has 1024 bits, fewer than 2048`,
        `jwt-rbac: ${source}: JWKS key #2 (kid "roca") skipped: its RSA modulus has the ROCA fingerprint (CVE-2017-15361)`,
        `jwt-rbac: ${source}: JWKS key #3 (kid "e1") skipped: its RSA public exponent is below 3`,
      ]);
      // Never key material: no modulus (nor a part of one) in any log line.
      const modulus = rsa1024.publicJwk.n as string;
      for (const line of warnings) expect(line).not.toContain(modulus.slice(0, 16));
    }

    it("inline JWKS", async () => {
      const { warnings, logger } = recordingLogger();
      const options = { jwks: jwks() as { keys: JWK[] }, logger };
      expect(
        await outcome(
          runtime,
          options,
          await sign({ sub: "g" }, "RS256", keys.rs256.privateKey, { kid: "good" }),
        ),
      ).toEqual({ ok: true, userId: "g" });
      expect(await outcome(runtime, options, rs256(rsa1024, "w", "old"))).toEqual({
        ok: false,
        reason: "unknown_kid",
      });
      expect(await outcome(runtime, options, rs256(roca, "w", "roca"))).toEqual({
        ok: false,
        reason: "unknown_kid",
      });
      expect(await outcome(runtime, options, rs256(rsa1024, "w"))).toEqual({
        ok: false,
        reason: "invalid_signature",
      });
      // Four authenticators were built above: each warned about each weak key once.
      expect(warnings).toHaveLength(12);
      expectWarnings(warnings.slice(0, 3), "JWKS");
    });

    // Files are read by the Node build only (the web build says so: tested in config.test.ts).
    it.skipIf(runtime !== nodeRuntime)("JWKS file", async () => {
      const dir = mkdtempSync(join(tmpdir(), "jwt-rbac-weak-"));
      const jwksFile = join(dir, "jwks.json");
      writeFileSync(jwksFile, JSON.stringify(jwks()));
      const { warnings, logger } = recordingLogger();
      const token = await sign({ sub: "g" }, "RS256", keys.rs256.privateKey, { kid: "good" });
      expect(await outcome(runtime, { jwksFile, logger }, token)).toEqual({ ok: true, userId: "g" });
      expectWarnings(warnings, "JWKS");
    });

    it("remote JWKS: the weak keys never reach jose's key set", async () => {
      jwksServer.answer = { body: jwks() };
      const { warnings, logger } = recordingLogger();
      const auth = createJwtAuthOn(runtime, { cache: false, jwksUrl, logger });
      await auth.ready;
      const ask = async (token: string) => {
        const result = await auth.authenticate({
          method: "GET",
          path: "/x",
          headers: { authorization: `Bearer ${token}` },
        });
        return result.ok
          ? { ok: true, userId: result.state.userId }
          : { ok: false, reason: result.error.reason };
      };
      expect(await ask(await sign({ sub: "g" }, "RS256", keys.rs256.privateKey, { kid: "good" }))).toEqual({
        ok: true,
        userId: "g",
      });
      expect(await ask(rs256(rsa1024, "w", "old"))).toEqual({ ok: false, reason: "unknown_kid" });
      expect(await ask(rs256(roca, "w", "roca"))).toEqual({ ok: false, reason: "unknown_kid" });
      expectWarnings(warnings, `remote JWKS ${jwksUrl}`);
    });
  });

  it("a JWKS of weak keys only is a configuration error", async () => {
    const error = await refusal(runtime, { jwks: { keys: [{ ...rsa1024.publicJwk, kid: "old" }] } });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe("no JWKS key can be used with RS256");
  });
});
