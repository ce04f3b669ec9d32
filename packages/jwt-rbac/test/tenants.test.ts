import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import { ConfigError, type IssuerOptions, type JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { MOUNTED_ADAPTERS, startMounted } from "./fixtures/mounted.js";
import { startTenantProvider, type TenantProvider } from "./fixtures/tenant-provider.js";

// Per-tenant issuers: templates with an allow-list or a validator, and a resolver; each resolved issuer
// gets its own remote key set, created once, kept in a bounded LRU, and made-up issuers cost nothing.

let idp: TenantProvider;
beforeAll(async () => {
  idp = await startTenantProvider();
  await Promise.all(["alpha", "beta", "gamma"].map((tenant) => idp.tenant(tenant)));
  for (let i = 0; i < 40; i++) await idp.tenant(`t${i}`);
});
afterAll(async () => {
  await idp.close();
});

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
/** A token naming `tenant`'s issuer with a signature nobody made. */
const forgedToken = (tenant: string) =>
  `${b64({ alg: "RS256", kid: "k" })}.${b64({ iss: idp.issuer(tenant), sub: "x", exp: Math.floor(Date.now() / 1000) + 300 })}.${Buffer.alloc(256, 1).toString("base64url")}`;

const template = (extra: Partial<IssuerOptions> = {}): IssuerOptions => ({
  issuer: `${idp.origin}/{tenantid}/v2.0`,
  jwksUrl: `${idp.origin}/{tenantid}/discovery/v2.0/keys`,
  tenants: ["alpha", "beta"],
  ...extra,
});

describe.each([
  ["webcrypto", webRuntime],
  ["node:crypto", nodeRuntime],
])("tenant issuers, %s build", (_name, runtime) => {
  const check = async (options: JwtRbacOptions, token: string) => {
    const result = await createJwtAuthOnce(options).authenticate({
      method: "GET",
      path: "/x",
      headers: { authorization: `Bearer ${token}` },
    });
    return result.ok ? "ok" : result.error.reason;
  };
  const instances = new Map<JwtRbacOptions, ReturnType<typeof createJwtAuthOn>>();
  const createJwtAuthOnce = (options: JwtRbacOptions) => {
    let auth = instances.get(options);
    if (auth === undefined) {
      auth = createJwtAuthOn(runtime, options);
      instances.set(options, auth);
    }
    return auth;
  };

  it("trusts allow-listed tenants of a template, each with its own keys, fetched once", async () => {
    const options: JwtRbacOptions = { algorithm: "RS256", issuers: [template()] };
    const before = idp.count("alpha");
    for (let i = 0; i < 3; i++)
      expect(await check(options, await idp.sign("alpha", { sub: "u" }))).toBe("ok");
    expect(await check(options, await idp.sign("beta", { sub: "u" }))).toBe("ok");
    expect(idp.count("alpha") - before).toBe(1);
    // A real tenant not on the list, and made-up issuers of every shape: refused before any fetch.
    const total = idp.count();
    expect(await check(options, await idp.sign("gamma", { sub: "u" }))).toBe("invalid_issuer");
    for (const iss of [
      `${idp.origin}/alpha/v2.0/`,
      `${idp.origin}/alpha/x/v2.0`,
      `${idp.origin}/al%70ha/v2.0`,
      `${idp.origin}//v2.0`,
      `${idp.origin}/alpha\u0000/v2.0`,
      "__proto__",
      `${idp.origin}/${"a".repeat(600)}/v2.0`,
    ]) {
      expect(await check(options, await idp.sign("alpha", { sub: "u", iss }))).toBe("invalid_issuer");
    }
    expect(idp.count()).toBe(total);
    // One tenant's key does not vouch for another tenant's token.
    expect(await check(options, await idp.sign("alpha", { sub: "u", iss: idp.issuer("beta") }))).toBe(
      "unknown_kid",
    );
  });

  it("takes a validator and discovery, and bounds the issuers it keeps and creates", async () => {
    const options: JwtRbacOptions = {
      algorithm: "RS256",
      maxTenantIssuers: 3,
      issuers: [
        { issuer: `${idp.origin}/{tenantid}/v2.0`, discovery: true, tenants: (id) => /^t\d+$/.test(id) },
      ],
    };
    expect(await check(options, await idp.sign("t0", { sub: "u" }))).toBe("ok");
    const before = idp.count();
    // 40 valid tenants at once: at most 10 new issuers a second are made, at most 3 are kept.
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => check(options, await idp.sign(`t${i}`, { sub: "u" }))),
    );
    // The bucket holds 10, refilled at 10 a second while the burst runs: most of the 40 are refused.
    expect(answers.filter((answer) => answer === "ok").length).toBeLessThanOrEqual(20);
    expect(answers.filter((answer) => answer === "invalid_issuer").length).toBeGreaterThanOrEqual(20);
    expect(idp.count() - before).toBeLessThanOrEqual(2 * 20);
  });

  it("asks a resolver once per issuer, remembers its no, and refuses an answer for another issuer", async () => {
    const asked: string[] = [];
    const options: JwtRbacOptions = {
      algorithm: "RS256",
      issuers: async (iss) => {
        asked.push(iss);
        if (iss === idp.issuer("alpha"))
          return { issuer: iss, jwksUrl: `${idp.origin}/alpha/discovery/v2.0/keys` };
        if (iss === idp.issuer("beta"))
          return { issuer: idp.issuer("alpha"), jwksUrl: `${idp.origin}/alpha/discovery/v2.0/keys` };
        return undefined;
      },
    };
    for (let i = 0; i < 3; i++)
      expect(await check(options, await idp.sign("alpha", { sub: "u" }))).toBe("ok");
    expect(await check(options, await idp.sign("gamma", { sub: "u" }))).toBe("invalid_issuer");
    expect(await check(options, await idp.sign("gamma", { sub: "u" }))).toBe("invalid_issuer");
    expect(await check(options, await idp.sign("beta", { sub: "u" }))).toBe("invalid_issuer");
    expect(asked).toEqual([idp.issuer("alpha"), idp.issuer("gamma"), idp.issuer("beta")]);
  });
});

describe.each([
  ["webcrypto", webRuntime],
  ["node:crypto", nodeRuntime],
])("refused and proven tenant issuers, %s build", (_name, runtime) => {
  const checker = (options: JwtRbacOptions) => {
    const auth = createJwtAuthOn(runtime, { ...options, cache: false });
    return async (token: string) => {
      const result = await auth.authenticate({
        method: "GET",
        path: "/x",
        headers: { authorization: `Bearer ${token}` },
      });
      return result.ok ? "ok" : result.error.reason;
    };
  };
  const admitAll = (extra: Partial<IssuerOptions> = {}): JwtRbacOptions => ({
    algorithm: "RS256",
    issuers: [template({ tenants: () => true, ...extra })],
  });

  it("refuses a tenant id that is all dots or would move the fetch elsewhere, before any fetch, whatever the validator says", async () => {
    const admitted: string[] = [];
    for (const extra of [{}, { jwksUrl: undefined, discovery: true }] as Partial<IssuerOptions>[]) {
      const check = checker({
        algorithm: "RS256",
        issuers: [template({ ...extra, tenants: (id) => admitted.push(id) > 0 })],
      });
      const before = idp.count();
      for (const tenant of [
        ".",
        "..",
        "...",
        "%2e",
        "%2E%2E",
        ".%2e",
        "%2e.",
        "\u2024",
        "\u2024\u2024",
        "\uff0e",
        "\uff0e\uff0e",
        "\u3002",
        "",
        " ",
        "..\u0000",
        "a/..",
        "../alpha",
        "alpha/../beta",
        "alpha%2f..%2fbeta",
        "a".repeat(129),
        "alpha\t",
      ]) {
        const token = await idp.sign("alpha", { sub: "u", iss: `${idp.origin}/${tenant}/v2.0` });
        expect(await check(token), JSON.stringify(tenant)).toBe("invalid_issuer");
      }
      expect(idp.count()).toBe(before);
      // Only ids that fill the template in place ever reach the validator.
      expect(admitted.filter((id) => /^\.+$/.test(id) || !/^[A-Za-z0-9._-]{1,128}$/.test(id))).toEqual([]);
      // Dots inside an id are one segment like any other: a.b is a tenant (unknown here, so no keys).
      const dotted = idp.count("a.b");
      expect(await check(await idp.sign("alpha", { sub: "u", iss: idp.issuer("a.b") }))).toBe(
        "invalid_issuer",
      );
      expect(idp.count("a.b") - dotted).toBe(1);
      expect(await check(await idp.sign("alpha", { sub: "u" }))).toBe("ok");
    }
    // The longest id is 128 characters.
    const long = "l".repeat(128);
    await idp.tenant(long);
    expect(await checker(admitAll())(await idp.sign(long, { sub: "u" }))).toBe("ok");
  });

  it("takes only a validator's synchronous true: false, a throw, a promise or a truthy value refuses, before any fetch", async () => {
    const verdicts: [string, (id: string) => unknown][] = [
      ["false", () => false],
      [
        "throws",
        () => {
          throw new Error("directory down");
        },
      ],
      ["a promise of true", () => Promise.resolve(true)],
      ["a rejected promise", () => Promise.reject(new Error("directory down"))],
      ['"true"', () => "true"],
      ["1", () => 1],
      ["an object", () => ({})],
      ["undefined", () => undefined],
    ];
    for (const [name, verdict] of verdicts) {
      const check = checker(admitAll({ tenants: verdict as (id: string) => boolean }));
      const before = idp.count();
      expect(await check(await idp.sign("alpha", { sub: "u" })), name).toBe("invalid_issuer");
      expect(idp.count(), name).toBe(before);
    }
    expect(
      await checker(admitAll({ tenants: (id) => id === "alpha" }))(await idp.sign("alpha", { sub: "u" })),
    ).toBe("ok");
  });

  it("spends none of the creation budget on refused issuers, and remembers an issuer without keys as refused", async () => {
    const check = checker({
      algorithm: "RS256",
      maxTenantIssuers: 3,
      issuers: [template({ tenants: (id) => /^t\d+$/.test(id) || id.startsWith("nokeys") })],
    });
    // 200 issuers the validator refuses: no slot, no budget, no fetch.
    const before = idp.count();
    const refused = await Promise.all(
      Array.from({ length: 200 }, (_, i) => check(`${forgedToken(`x${i}`)}`)),
    );
    expect(new Set(refused)).toEqual(new Set(["invalid_issuer"]));
    expect(idp.count()).toBe(before);
    // The whole burst of 10 creations is still there for real tenants.
    const real = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => check(await idp.sign(`t${i + 10}`, { sub: "u" }))),
    );
    expect(real).toEqual(Array.from({ length: 10 }, () => "ok"));
    expect(idp.count() - before).toBe(10);
    // An issuer the validator admits but whose keys are not found: one fetch, then refused without asking.
    await new Promise((done) => setTimeout(done, 200));
    const noKeys = `nokeys-${_name.replace(/\W/g, "")}`;
    expect(await check(forgedToken(noKeys))).toBe("invalid_issuer");
    expect(await check(forgedToken(noKeys))).toBe("invalid_issuer");
    expect(idp.count(noKeys)).toBe(1);
  });

  it("keeps tenants whose keys verified a token when strangers with keys arrive", async () => {
    idp.sharedKeysFor = (tenant) => tenant.startsWith("k-");
    try {
      const check = checker({
        algorithm: "RS256",
        maxTenantIssuers: 2,
        issuers: [template({ tenants: (id) => id === "alpha" || id === "beta" || id.startsWith("k-") })],
      });
      expect(await check(await idp.sign("alpha", { sub: "u" }))).toBe("ok");
      expect(await check(await idp.sign("beta", { sub: "u" }))).toBe("ok");
      const [alpha, beta] = [idp.count("alpha"), idp.count("beta")];
      // Ten made-up tenants the identity provider does serve keys for, their tokens forged: made (a
      // fetch each), never proven, so they only push each other out.
      for (let i = 0; i < 10; i++) {
        expect(await check(forgedToken(`k-${i}`))).not.toBe("ok");
        expect(await check(await idp.sign("alpha", { sub: "u" }))).toBe("ok");
      }
      expect(await check(await idp.sign("beta", { sub: "u" }))).toBe("ok");
      expect([idp.count("alpha"), idp.count("beta")]).toEqual([alpha, beta]);
    } finally {
      idp.sharedKeysFor = () => false;
    }
  });

  it("calls a resolver a bounded number of times a second for made-up issuers, and keeps no slot for its no", async () => {
    let calls = 0;
    const check = checker({
      algorithm: "RS256",
      issuers: (iss) => {
        calls++;
        return iss === idp.issuer("gamma")
          ? { issuer: iss, jwksUrl: `${idp.origin}/gamma/discovery/v2.0/keys` }
          : undefined;
      },
    });
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => check(forgedToken(`r${i}`))));
    expect(new Set(answers)).toEqual(new Set(["invalid_issuer"]));
    expect(calls).toBeLessThanOrEqual(110);
    expect(calls).toBeGreaterThanOrEqual(90);
    // The resolver's budget refills (100 a second); the creation budget was never touched.
    await new Promise((done) => setTimeout(done, 50));
    expect(await check(await idp.sign("gamma", { sub: "u" }))).toBe("ok");
  });
});

describe.each(MOUNTED_ADAPTERS)("tenant issuers over HTTP, %s", (adapter) => {
  it("answers 200 for an allowed tenant and the exact 401 for another", async () => {
    const server = await startMounted(adapter, { algorithm: "RS256", issuers: [template()] });
    try {
      const ok = await fetch(`${server.url}/x`, {
        headers: { authorization: `Bearer ${await idp.sign("beta", { sub: "u" })}` },
      });
      expect(ok.status).toBe(200);
      const refused = await fetch(`${server.url}/x`, {
        headers: { authorization: `Bearer ${await idp.sign("gamma", { sub: "u" })}` },
      });
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe(
        'Bearer realm="platform", error="invalid_token", error_description="Invalid token: unexpected issuer"',
      );
    } finally {
      await server.close();
    }
  });
});

it("refuses templates without tenants, with two placeholders, and tenants on a plain issuer", () => {
  const bad: IssuerOptions[][] = [
    [{ issuer: "https://login.example/{tenantid}/v2.0", discovery: true }],
    [{ issuer: "https://{a}.example/{b}", discovery: true, tenants: ["x"] }],
    [{ issuer: "https://login.example/v2.0", discovery: true, tenants: ["x"] }],
    [{ issuer: "http://example.com/{tenantid}/v2.0", discovery: true, tenants: ["x"] }],
  ];
  for (const issuers of bad)
    expect(() => createJwtAuthOn(nodeRuntime, { algorithm: "RS256", issuers })).toThrow(ConfigError);
});
