import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/verify/signature-types.js";
import { sign, testKeys } from "./fixtures/keys.js";
import { type OidcProvider, startProvider } from "./fixtures/oidc-provider.js";

const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];

let a: OidcProvider;
let b: OidcProvider;
beforeAll(async () => {
  [a, b] = await Promise.all([startProvider({ realm: "a" }), startProvider({ realm: "b", alg: "ES256" })]);
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

async function check(auth: ReturnType<typeof createJwtAuthOn>, token: string) {
  const result = await auth.authenticate({
    method: "GET",
    path: "/x",
    headers: { authorization: `Bearer ${token}` },
  });
  return result.ok ? `ok:${result.state.userId}` : result.error.reason;
}

const fetches = () => a.count("jwks") + a.count("discovery") + b.count("jwks") + b.count("discovery");

describe.each(RUNTIMES)("issuers, verifier %s", (_name, runtime) => {
  const create = (options: JwtRbacOptions) => createJwtAuthOn(runtime, options);
  const twoIssuers = (): JwtRbacOptions => ({
    audience: "api://default",
    issuers: [
      { issuer: a.issuer, jwksUrl: a.jwksUrl },
      { issuer: b.issuer, discovery: true, algorithms: ["ES256"], audience: ["api://b"] },
    ],
  });

  it("verifies each issuer's tokens with that issuer's own keys and settings", async () => {
    const auth = create(twoIssuers());
    expect(await check(auth, await a.sign({ sub: "from-a", aud: "api://default" }))).toBe("ok:from-a");
    expect(await check(auth, await b.sign({ sub: "from-b", aud: "api://b" }))).toBe("ok:from-b");
    // Each issuer's audience and algorithms are its own.
    expect(await check(auth, await a.sign({ sub: "x", aud: "api://b" }))).toBe("invalid_audience");
    expect(await check(auth, await b.sign({ sub: "x", aud: "api://default" }))).toBe("invalid_audience");
  });

  it("refuses a token naming an unlisted issuer before anything is fetched", async () => {
    const before = fetches();
    const auth = create(twoIssuers());
    const tokens = [
      await a.sign({ sub: "x", iss: "https://evil.example" }),
      await a.sign({ sub: "x", iss: `${a.issuer}/` }),
      await a.sign({ sub: "x", iss: "__proto__" }),
      await a.sign({ sub: "x", iss: "constructor" }),
      await a.sign({ sub: "x", iss: undefined as unknown as string }),
      await a.sign({ sub: "x", iss: [a.issuer] as unknown as string }),
    ];
    for (const token of tokens) expect(await check(auth, token)).toBe("invalid_issuer");
    expect(fetches()).toBe(before);
  });

  it("does not let one issuer's key vouch for another issuer's token", async () => {
    const auth = create({
      issuers: [
        { issuer: a.issuer, jwksUrl: a.jwksUrl },
        { issuer: b.issuer, jwksUrl: b.jwksUrl, algorithms: ["ES256"] },
      ],
    });
    // Claims to come from a, signed by b's key (and kid): a's keys are the only ones tried.
    const [bKey] = b.keys;
    const forged = await b.sign({ sub: "x", iss: a.issuer }, bKey === undefined ? {} : { key: bKey });
    expect(await check(auth, forged)).toBe("algorithm_not_allowed");
    const sameAlg = await sign({ sub: "x", iss: a.issuer }, "RS256", (await testKeys()).rs256.privateKey, {
      kid: a.keys[0]?.kid,
    });
    expect(await check(auth, sameAlg)).toBe("invalid_signature");
  });

  it("mixes local and remote issuers", async () => {
    const keys = await testKeys();
    const auth = create({
      issuers: [
        { issuer: "https://local.example", verificationKeys: [keys.hsSecret], algorithms: ["HS256"] },
        { issuer: a.issuer, jwksUrl: a.jwksUrl },
      ],
    });
    const before = fetches();
    expect(
      await check(auth, await sign({ sub: "l", iss: "https://local.example" }, "HS256", keys.hsSecret)),
    ).toBe("ok:l");
    expect(fetches()).toBe(before);
    expect(await check(auth, await a.sign({ sub: "r" }))).toBe("ok:r");
  });

  it("refuses a token whose iss differs from a single configured issuer before any fetch", async () => {
    const before = fetches();
    const auth = create({ issuer: a.issuer, discovery: true });
    expect(await check(auth, await a.sign({ sub: "x", iss: "https://evil.example" }))).toBe("invalid_issuer");
    expect(await check(auth, await a.sign({ sub: "x", iss: undefined as unknown as string }))).toBe(
      "invalid_issuer",
    );
    expect(fetches()).toBe(before);
    expect(await check(auth, await a.sign({ sub: "ok" }))).toBe("ok:ok");
  });
});
