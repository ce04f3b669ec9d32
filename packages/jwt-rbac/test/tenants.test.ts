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
