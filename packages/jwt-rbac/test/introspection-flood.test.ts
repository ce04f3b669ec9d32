import { randomBytes } from "node:crypto";
import { runFlood } from "@agent-platform/test-support/flood";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JwtRbacOptions } from "../src/index.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { type MountedAdapter, startMounted } from "./fixtures/mounted.js";

// A flood of made-up opaque tokens, far past `maxPerSecond`, against a real authorization-server
// stand-in on loopback: a token the endpoint answered active keeps working every time, past
// `cacheMaxSec` (its refresh draws on its own share of the budget), while the strangers are refused and
// cost the endpoint at most `maxPerSecond`. The 10-second figures are in `pnpm bench` (group "floods").

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer();
});
afterAll(async () => {
  await as.close();
});

/** The rates: 200 garbage tokens a second, the known token every 100 ms, default maxPerSecond (20). */
const FLOOD_PER_SECOND = 200;
const PROBE_EVERY_MS = 100;
/** cacheMaxSec 1: the known token's answer expires twice during the flood. */
const DURATION_MS = 2_500;
const MEMORY_BOUND = 64 * 1024 * 1024;

const options = (): JwtRbacOptions => ({
  algorithm: "ES256",
  issuer: as.issuer,
  jwksUrl: as.jwksUrl,
  audience: "api://platform",
  scopesClaim: "scope",
  introspection: {
    url: as.introspectionUrl,
    clientAuth: { method: "client_secret_basic", clientId: as.client.id, clientSecret: as.client.secret },
    cacheMaxSec: 1,
  },
});

const status = async (url: string, token: string) => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
};

// One adapter per build: the budget lives in the core, which every adapter shares.
describe.each<MountedAdapter>(["hono", "fetch-webcrypto"])("an introspection flood, %s", (adapter) => {
  it("never refuses a known-active token, refuses the strangers, and costs the endpoint at most maxPerSecond", async () => {
    const server = await startMounted(adapter, options());
    try {
      const known = as.opaque({
        sub: "svc-known",
        scope: "agents:read",
        aud: "api://platform",
        exp: Math.floor(Date.now() / 1000) + 600,
      });
      expect(await status(`${server.url}/agents`, known)).toBe(200);
      const before = as.count("introspect");
      const result = await runFlood({
        durationMs: DURATION_MS,
        floodPerSecond: FLOOD_PER_SECOND,
        flood: () => status(`${server.url}/agents`, randomBytes(24).toString("base64url")),
        probeEveryMs: PROBE_EVERY_MS,
        probe: () => status(`${server.url}/agents`, known),
        tickMs: 10,
      });
      const seconds = result.elapsedMs / 1000;
      // Every probe accepted (today's code refused most of them once the answer expired).
      expect(result.probes.length).toBeGreaterThanOrEqual(DURATION_MS / PROBE_EVERY_MS - 1);
      expect(result.probes.filter((answer) => answer !== 200)).toEqual([]);
      // The strangers: refused (inactive when asked, unavailable past their share), never a 5xx.
      expect(result.floodCalls).toBeGreaterThanOrEqual((FLOOD_PER_SECOND * DURATION_MS) / 1000 - 20);
      expect([...result.flooded.keys()]).toEqual([401]);
      // The endpoint: at most maxPerSecond (20) a second and one burst of as many.
      expect(as.count("introspect") - before).toBeLessThanOrEqual(20 * seconds + 20);
      // The known token was asked about again (the answer expired), so it was not served stale only.
      expect(as.count("introspect") - before).toBeGreaterThan(0);
      expect(result.memory.after.heapUsed - result.memory.before.heapUsed).toBeLessThan(MEMORY_BOUND);
    } finally {
      await server.close();
    }
  });
});
