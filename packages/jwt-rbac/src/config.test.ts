import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, type Logger } from "@agent-platform/common";
import { afterEach, describe, expect, it, vi } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import { testKeys } from "../test/fixtures/keys.js";
import { createJwtAuthOn } from "./auth.js";
import { keySourcesFromEnv } from "./env.js";
import { runtime as nodeRuntime } from "./node/runtime.js";
import type { JwtRbacOptions } from "./options.js";
import { runtime as webRuntime } from "./runtime.js";

const create = (options: JwtRbacOptions) => createJwtAuthOn(nodeRuntime, options);
const SECRET = "0123456789abcdef0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "jwt-rbac-config-"));

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("construction fails fast", () => {
  it.each([
    ["no key source", {}, /no verification key/],
    ["unsupported algorithm", { algorithm: "none", verificationKeys: ["x"] }, /unsupported algorithm "none"/],
    [
      "HS256 with a PEM public key",
      {
        algorithm: "HS256",
        verificationKeys: ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"],
      },
      /looks like a PEM public key/,
    ],
    [
      "RS256 with a secret",
      { algorithm: "RS256", verificationKeys: ["just-a-secret"] },
      /looks like a shared secret/,
    ],
    [
      "a private PEM",
      { verificationKeys: ["-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"] },
      /never a private key/,
    ],
    [
      "a private JWK",
      { verificationKeys: [JSON.stringify({ kty: "RSA", n: "x", e: "AQAB", d: "y" })] },
      /private JWK/,
    ],
    ["broken JWK JSON", { verificationKeys: ["{nope"] }, /not valid JSON/],
    ["a missing JWKS file", { jwksFile: join(dir, "missing.json") }, /cannot read JWKS file .*ENOENT/],
    ["a JWKS without keys", { jwks: { nope: [] } as never }, /not a JWKS/],
    ["plain http jwksUrl", { jwksUrl: "http://issuer.example/jwks.json" }, /https/],
    [
      "verifyAudience without audience",
      { algorithm: "HS256", verificationKeys: [SECRET], verifyAudience: true },
      /verifyAudience/,
    ],
    [
      "a bad scope mapping",
      { algorithm: "HS256", verificationKeys: [SECRET], scopeMappings: { "GET /x": ["agents:a1:read"] } },
      /not a required scope/,
    ],
    [
      "a bad route",
      { algorithm: "HS256", verificationKeys: [SECRET], scopeMappings: { "/x": ["a:b"] } },
      /<METHOD> <path>/,
    ],
    [
      "a bad route in a policy",
      { algorithm: "HS256", verificationKeys: [SECRET], policy: { scopeMappings: { "GET /x/a*": ["a:b"] } } },
      /mixes a wildcard/,
    ],
    ...[["/agents"], "agents", [""], ["a:b"]].map(
      (listingResources) =>
        [
          `bad listing resources ${JSON.stringify(listingResources)}`,
          {
            algorithm: "HS256",
            verificationKeys: [SECRET],
            policy: { listingResources: listingResources as string[] },
          },
          /policy.listingResources must be an array of resource names/,
        ] as const,
    ),
    ...[
      ["sys tem", "config"],
      ["system", "con:fig"],
      ["", "config"],
      ["system", "system"],
      ["system", 1],
    ].map(
      ([legacy, current]) =>
        [
          `a bad scope alias ${JSON.stringify([legacy, current])}`,
          {
            algorithm: "HS256",
            verificationKeys: [SECRET],
            policy: { scopeAliases: { [legacy as string]: current as string } },
          },
          /policy.scopeAliases: .* must map one resource name to another/,
        ] as const,
    ),
    ["a bad cache", { algorithm: "HS256", verificationKeys: [SECRET], cache: { max: 0 } }, /cache.max/],
    [
      "an undefined key (unset env var)",
      { algorithm: "HS256", verificationKeys: [undefined as unknown as string] },
      /verificationKeys\[0\] is undefined/,
    ],
    [
      "an empty key",
      { algorithm: "HS256", verificationKeys: [SECRET, " "] },
      /verificationKeys\[1\] is empty/,
    ],
    ["a 6-byte HS256 secret", { algorithm: "HS256", verificationKeys: ["s3cret"] }, /shorter than 32 bytes/],
    [
      "a 32-byte secret for HS384",
      { algorithm: "HS384", verificationKeys: [SECRET] },
      /shorter than 48 bytes; HS384 needs/,
    ],
    [
      "a 48-byte secret for HS512",
      { algorithms: ["HS256", "HS512"], verificationKeys: [SECRET + SECRET.slice(16)] },
      /shorter than 64 bytes/,
    ],
    [
      "an issuers entry without a key source",
      {
        issuers: [
          { issuer: "https://a.example", jwksUrl: "https://a.example/jwks" },
          { issuer: "https://b.example" },
        ],
      },
      /issuers\[1\] \("https:\/\/b.example"\) has no key source/,
    ],
    [
      "an issuer listed twice",
      {
        issuers: [
          { issuer: "https://a.example", discovery: true },
          { issuer: "https://a.example", discovery: true },
        ],
      },
      /listed twice/,
    ],
    [
      "issuers next to top-level keys",
      { jwksUrl: "https://a.example/jwks", issuers: [{ issuer: "https://a.example", discovery: true }] },
      /issuers excludes the top-level jwksUrl/,
    ],
    ["discovery without an issuer", { discovery: true }, /discovery needs one `issuer`/],
    [
      "discovery of a plain-http issuer",
      { issuer: "http://idp.example", discovery: true },
      /issuer \(with discovery\) must use https/,
    ],
    [
      "an http issuers[0].jwksUrl",
      { issuers: [{ issuer: "https://a.example", jwksUrl: "http://a.example/jwks" }] },
      /issuers\[0\].jwksUrl must use https/,
    ],
    [
      "an empty audience",
      { algorithm: "HS256", verificationKeys: [SECRET], audience: [] },
      /audience must not be empty/,
    ],
    [
      "an adminScope with a space, which no scope string can grant",
      { algorithm: "HS256", verificationKeys: [SECRET], adminScope: "platform admin" },
      /adminScope must be one scope: not empty, no space/,
    ],
    [
      "an empty adminScope",
      { algorithm: "HS256", verificationKeys: [SECRET], adminScope: "" },
      /adminScope must be one scope/,
    ],
    [
      "a bad remoteKeys setting",
      { jwksUrl: "https://a.example/jwks", remoteKeys: { maxBytes: 0 } },
      /remoteKeys.maxBytes/,
    ],
  ] as const)("%s", (_label, options, message) => {
    expect(() => create(options as JwtRbacOptions)).toThrow(ConfigError);
    expect(() => create(options as JwtRbacOptions)).toThrow(message);
  });

  it("refuses a JWKS file that is not JSON", () => {
    const path = join(dir, "bad.json");
    writeFileSync(path, "not json");
    expect(() => create({ jwksFile: path })).toThrow(/not valid JSON/);
  });

  it("says that jwksFile needs Node on other runtimes", () => {
    expect(() => createJwtAuthOn(webRuntime, { jwksFile: "/x.json" })).toThrow(/pass the JWKS inline/);
  });

  it("rejects ready when a PEM cannot be imported for the algorithm", async () => {
    const keys = await testKeys();
    await expect(
      create({ algorithm: "RS256", verificationKeys: [keys.es256.publicPem] }).ready,
    ).rejects.toThrow(/verification key #1 cannot be imported for RS256/);
    await expect(
      create({ algorithm: "ES256", verificationKeys: [keys.rs256.publicPem] }).ready,
    ).rejects.toThrow(ConfigError);
  });
});

describe("logging", () => {
  it("warns once for validate:false and for secretKey, never with the key", () => {
    const unverified = recordingLogger();
    create({ validate: false, logger: unverified.logger });
    expect(unverified.warnings).toEqual([expect.stringMatching(/NOT verified/)]);
    const deprecated = recordingLogger();
    create({
      algorithm: "HS256",
      secretKey: "super-secret-value-0123456789abcdef",
      logger: deprecated.logger,
    });
    expect(deprecated.warnings).toHaveLength(1);
    expect(JSON.stringify(deprecated.records)).not.toContain("super-secret-value");
  });

  it("refuses a logger that is not pino-shaped, naming the option", () => {
    const warnOnly = { warn() {}, debug() {} } as unknown as Logger;
    expect(() => create({ validate: false, logger: warnOnly })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", component: "jwt-rbac", option: "logger" }),
    );
  });
});

describe("environment", () => {
  it("reads JWT_VERIFICATION_KEY (with escaped PEM newlines) and JWT_JWKS_FILE only when no key option is given", async () => {
    const keys = await testKeys();
    vi.stubEnv("JWT_VERIFICATION_KEY", keys.rs256.publicPem.replace(/\n/g, "\\n"));
    await expect(create({}).ready).resolves.toBeUndefined();
    // An explicit option wins; the env key is not mixed in.
    vi.stubEnv("JWT_VERIFICATION_KEY", "not-a-pem");
    await expect(create({ verificationKeys: [keys.rs256.publicPem] }).ready).resolves.toBeUndefined();
    expect(() => create({})).toThrow(/looks like a shared secret/);
  });

  it("keySourcesFromEnv reads the same two variables by the same rule, from a given environment too", () => {
    expect(keySourcesFromEnv({})).toEqual({});
    expect(keySourcesFromEnv({ JWT_VERIFICATION_KEY: "", JWT_JWKS_FILE: "" })).toEqual({});
    const given = { JWT_VERIFICATION_KEY: "a\\nb", JWT_JWKS_FILE: "/keys.json", JWT_JWKS_URL: "https://x" };
    expect(keySourcesFromEnv(given)).toEqual({ verificationKeys: ["a\\nb"], jwksFile: "/keys.json" });
    vi.stubEnv("JWT_JWKS_FILE", "/from-process.json");
    expect(keySourcesFromEnv()).toEqual({ jwksFile: "/from-process.json" });
  });
});
