import { randomBytes } from "node:crypto";
import { runFlood } from "@agent-platform/test-support/flood";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JwtRbacOptions } from "../src/index.js";
import { type MountedAdapter, startMounted } from "./fixtures/mounted.js";
import { startTenantProvider, type TenantProvider } from "./fixtures/tenant-provider.js";

// A flood of random `iss` values against per-tenant issuers whose validator accepts them all (the
// worst case): half name tenants the identity provider has no keys for, half tenants it serves keys for
// (but whose tokens are forged). A real tenant whose keys verified a token keeps being accepted with fresh
// tokens throughout; the identity provider is asked a bounded number of times a second in total; memory is
// bounded. The 10-second figures are in `pnpm bench` (group "floods").

let idp: TenantProvider;
beforeAll(async () => {
  idp = await startTenantProvider();
  await idp.tenant("real");
  idp.sharedKeysFor = (tenant) => tenant.startsWith("k-");
});
afterAll(async () => {
  await idp.close();
});

const FLOOD_PER_SECOND = 200;
const PROBE_EVERY_MS = 100;
const DURATION_MS = 1_500;
const MEMORY_BOUND = 32 * 1024 * 1024;

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
/** A token naming a made-up tenant, with a signature nobody made: refused whatever it costs to find out. */
const forged = (index: number) => {
  const tenant = `${index % 2 === 0 ? "k" : "n"}-${randomBytes(8).toString("hex")}`;
  const exp = Math.floor(Date.now() / 1000) + 300;
  return `${b64({ alg: "RS256", kid: "k1" })}.${b64({ iss: idp.issuer(tenant), sub: "x", exp })}.${randomBytes(256).toString("base64url")}`;
};

const status = async (url: string, token: string) => {
  const response = await fetch(`${url}/x`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
};

// One adapter per build, each with a small and the default bound: the tenants live in the core.
describe.each<[MountedAdapter, number | undefined]>([
  ["express4", 5],
  ["fetch-webcrypto", undefined],
])("a flood of made-up tenants, %s, maxTenantIssuers %s", (adapter, maxTenantIssuers) => {
  it("keeps accepting a real tenant's fresh tokens, and costs the identity provider a bounded rate", async () => {
    const options: JwtRbacOptions = {
      algorithm: "RS256",
      ...(maxTenantIssuers === undefined ? {} : { maxTenantIssuers }),
      issuers: [
        {
          issuer: `${idp.origin}/{tenantid}/v2.0`,
          jwksUrl: `${idp.origin}/{tenantid}/discovery/v2.0/keys`,
          tenants: (id) => /^[a-z0-9-]+$/.test(id),
        },
      ],
    };
    const server = await startMounted(adapter, options);
    try {
      expect(await status(server.url, await idp.sign("real", { sub: "u" }))).toBe(200);
      const realFetches = idp.count("real");
      const before = idp.count();
      const result = await runFlood({
        durationMs: DURATION_MS,
        floodPerSecond: FLOOD_PER_SECOND,
        flood: (index) => status(server.url, forged(index)),
        probeEveryMs: PROBE_EVERY_MS,
        probe: async () => status(server.url, await idp.sign("real", { sub: "u" })),
        tickMs: 10,
      });
      const seconds = result.elapsedMs / 1000;
      expect(result.probes.length).toBeGreaterThanOrEqual(DURATION_MS / PROBE_EVERY_MS - 1);
      expect(result.probes.filter((answer) => answer !== 200)).toEqual([]);
      expect([...result.flooded.keys()]).toEqual([401]);
      // The real tenant was never pushed out and made again.
      expect(idp.count("real")).toBe(realFetches);
      // At most 10 new issuers a second (a burst of 10), one key-set fetch each.
      const fetches = idp.count() - before;
      expect(fetches).toBeLessThanOrEqual(10 * seconds + 10);
      expect(fetches).toBeGreaterThan(0);
      expect(result.memory.after.heapUsed - result.memory.before.heapUsed).toBeLessThan(MEMORY_BOUND);
    } finally {
      await server.close();
    }
  });
});
