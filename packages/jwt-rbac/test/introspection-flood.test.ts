import { randomBytes } from "node:crypto";
import { retainedMemory, runFlood } from "@agent-platform/test-support/flood";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { introspectedOptions } from "./fixtures/introspected-options.js";
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

/** The rates measured: 200 garbage tokens a second, the known token every 100 ms, default maxPerSecond (20). */
const FLOOD_PER_SECOND = 200;
const PROBE_EVERY_MS = 100;
/** cacheMaxSec 1: the known token's answer expires twice during the flood. */
const DURATION_MS = 2_200;
const MEMORY_BOUND = 32 * 1024 * 1024;

const options = () => introspectedOptions(as, { cacheMaxSec: 1 });

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

// Memory amplification: made-up tokens of the longest accepted length (16 384 characters), each refused
// and remembered. Counted in entries only, 10 000 of them would hold 160 MB; the refusals remembered are
// bounded in characters too. Through tokenVerifier, which (unlike introspection) has no rate bound.
describe.each([
  ["node:crypto", nodeRuntime],
  ["webcrypto", webRuntime],
])("a flood of the longest made-up tokens, %s build", (_name, runtime) => {
  it("holds a bounded amount of memory however long the tokens are", async () => {
    let asked = 0;
    const given = options().introspection as NonNullable<JwtRbacOptions["introspection"]>;
    const auth = createJwtAuthOn(runtime, {
      ...options(),
      // Opaque tokens go to tokenVerifier only; its no is remembered 300 s (the longest allowed).
      introspection: { ...given, tokenTypes: ["jwt"], negativeCacheSec: 300 },
      tokenVerifier: () => {
        asked++;
        return null;
      },
    });
    const ask = (token: string) =>
      auth.authenticate({ method: "GET", path: "/agents", headers: { authorization: `Bearer ${token}` } });
    const first = randomBytes(12_288).toString("base64url");
    const before = retainedMemory().heapUsed;
    await ask(first);
    for (let batch = 0; batch < 60; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => ask(randomBytes(12_288).toString("base64url"))),
      );
      expect(answers.every((answer) => !answer.ok && answer.error.reason === "token_inactive")).toBe(true);
    }
    const grown = retainedMemory().heapUsed - before;
    expect(asked).toBe(6_001);
    // 6 000 refusals of 16 384 characters: about 100 MB retained if all were kept; at most 4 Mi characters are.
    expect(grown).toBeLessThan(16 * 1024 * 1024);
    // The first one was forgotten (the oldest go first): asked again.
    await ask(first);
    expect(asked).toBe(6_002);
  });
});
