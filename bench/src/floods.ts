import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { jwtRbac } from "@agent-platform/jwt-rbac/hono";
import { type FloodResult, runFlood } from "@agent-platform/test-support/flood";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { startAuthorizationServer } from "../../packages/jwt-rbac/test/fixtures/authorization-server.js";
import { startTenantProvider } from "../../packages/jwt-rbac/test/fixtures/tenant-provider.js";
import { proofPool } from "./dpop-proofs.js";
import type { GroupResult, Table, Target } from "./types.js";

/**
 * Floods that must not lock anyone out (jwt-rbac): made-up opaque tokens against introspection, made-up
 * tenant issuers, and one DPoP client filling the in-memory replay store, each at a fixed rate for 10 s
 * through Hono on loopback, with a legitimate client probing every 100 ms. The jwt-rbac suite runs the same
 * floods for about 2 s; these are the full figures.
 */
const FLOOD_PER_SECOND = 200;
const PROBE_EVERY_MS = 100;
const MIB = 1024 * 1024;

type JwtRbacOptions = Parameters<typeof jwtRbac>[0];

interface Served {
  url: string;
  close(): Promise<void>;
}

async function serveHono(options: JwtRbacOptions): Promise<Served> {
  const middleware = jwtRbac(options);
  await middleware.auth.ready;
  const app = new Hono();
  app.use(middleware);
  app.all("*", (c) => c.json({ ok: true }));
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agents`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

async function status(url: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  return response.status;
}

interface FloodRow {
  name: string;
  result: FloodResult;
  /** Requests the stand-in (authorization server, identity provider) received during the flood. */
  upstream: number;
  upstreamName: string;
}

const accepted = (result: FloodResult) => result.probes.filter((answer) => answer === 200).length;
const heapDeltaMiB = (result: FloodResult) =>
  (result.memory.after.heapUsed - result.memory.before.heapUsed) / MIB;
const rssDeltaMiB = (result: FloodResult) => (result.memory.after.rss - result.memory.before.rss) / MIB;

async function introspectionFlood(durationMs: number): Promise<FloodRow> {
  const as = await startAuthorizationServer();
  const server = await serveHono({
    algorithm: "ES256",
    issuer: as.issuer,
    jwksUrl: as.jwksUrl,
    introspection: {
      url: as.introspectionUrl,
      clientAuth: { method: "client_secret_basic", clientId: as.client.id, clientSecret: as.client.secret },
      cacheMaxSec: 1,
    },
  });
  try {
    const known = as.opaque({ sub: "svc", exp: Math.floor(Date.now() / 1000) + 600 });
    await status(server.url, { authorization: `Bearer ${known}` });
    const before = as.count("introspect");
    const result = await runFlood({
      durationMs,
      floodPerSecond: FLOOD_PER_SECOND,
      flood: () => status(server.url, { authorization: `Bearer ${randomBytes(24).toString("base64url")}` }),
      probeEveryMs: PROBE_EVERY_MS,
      probe: () => status(server.url, { authorization: `Bearer ${known}` }),
      tickMs: 10,
    });
    return {
      name: "introspection: made-up opaque tokens, default maxPerSecond (20), cacheMaxSec 1",
      result,
      upstream: as.count("introspect") - before,
      upstreamName: "introspections",
    };
  } finally {
    await server.close();
    await as.close();
  }
}

async function tenantFlood(durationMs: number, maxTenantIssuers: number): Promise<FloodRow> {
  const idp = await startTenantProvider();
  await idp.tenant("real");
  idp.sharedKeysFor = (tenant) => tenant.startsWith("k-");
  const server = await serveHono({
    algorithm: "RS256",
    maxTenantIssuers,
    issuers: [
      {
        issuer: `${idp.origin}/{tenantid}/v2.0`,
        jwksUrl: `${idp.origin}/{tenantid}/discovery/v2.0/keys`,
        tenants: (id) => /^[a-z0-9-]+$/.test(id),
      },
    ],
  });
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  try {
    await status(server.url, { authorization: `Bearer ${await idp.sign("real", { sub: "u" })}` });
    const before = idp.count();
    const result = await runFlood({
      durationMs,
      floodPerSecond: FLOOD_PER_SECOND,
      flood: (index) => {
        // Half the made-up tenants have keys at the identity provider (their tokens are forged), half none.
        const tenant = `${index % 2 === 0 ? "k" : "n"}-${randomBytes(8).toString("hex")}`;
        const claims = { iss: idp.issuer(tenant), sub: "x", exp: Math.floor(Date.now() / 1000) + 300 };
        const token = `${b64({ alg: "RS256", kid: "k1" })}.${b64(claims)}.${randomBytes(256).toString("base64url")}`;
        return status(server.url, { authorization: `Bearer ${token}` });
      },
      probeEveryMs: PROBE_EVERY_MS,
      probe: async () =>
        status(server.url, { authorization: `Bearer ${await idp.sign("real", { sub: "u" })}` }),
      tickMs: 10,
    });
    return {
      name: `tenants: random iss a validator admits, maxTenantIssuers ${maxTenantIssuers}`,
      result,
      upstream: idp.count() - before,
      upstreamName: "identity-provider fetches",
    };
  } finally {
    await server.close();
    await idp.close();
  }
}

async function replayFlood(durationMs: number): Promise<FloodRow> {
  const as = await startAuthorizationServer();
  // replayMax 5 000 (a share of 500 per key): the noisy client sends 4 times the whole store within the window.
  const server = await serveHono({
    algorithm: "ES256",
    issuer: as.issuer,
    jwksUrl: as.jwksUrl,
    dpop: { replayMax: 5_000 },
  });
  try {
    const noisy = proofPool();
    const quiet = proofPool();
    const tokenFor = async (jkt: string) => (await as.issue({ claims: { cnf: { jkt } } })).access_token;
    const [noisyToken, quietToken] = await Promise.all([tokenFor(noisy.jkt), tokenFor(quiet.jkt)]);
    const count = Math.ceil((durationMs / 1000) * FLOOD_PER_SECOND) + 10;
    const [noisyProofs, quietProofs] = await Promise.all([
      noisy.proofs("GET", server.url, noisyToken, count),
      quiet.proofs("GET", server.url, quietToken, Math.ceil(durationMs / PROBE_EVERY_MS) + 2),
    ]);
    const result = await runFlood({
      durationMs,
      floodPerSecond: FLOOD_PER_SECOND,
      flood: (index) =>
        status(server.url, { authorization: `DPoP ${noisyToken}`, dpop: noisyProofs[index] as string }),
      probeEveryMs: PROBE_EVERY_MS,
      probe: (index) =>
        status(server.url, { authorization: `DPoP ${quietToken}`, dpop: quietProofs[index] as string }),
      tickMs: 10,
    });
    return {
      name: "DPoP replay store: one key's proofs, replayMax 5 000 (share 500)",
      result,
      upstream: result.flooded.get(200) ?? 0,
      upstreamName: "noisy proofs accepted",
    };
  } finally {
    await server.close();
    await as.close();
  }
}

export async function runFloodsGroup({ quick }: { quick: boolean }): Promise<GroupResult> {
  const durationMs = quick ? 1_000 : 10_000;
  const rows: FloodRow[] = [];
  rows.push(await introspectionFlood(durationMs));
  rows.push(await tenantFlood(durationMs, 5));
  rows.push(await tenantFlood(durationMs, 100));
  rows.push(await replayFlood(durationMs));
  const table: Table = {
    title: `Floods at ${FLOOD_PER_SECOND}/s for ${durationMs / 1000} s, a legitimate request every ${PROBE_EVERY_MS} ms (Hono, Node build)`,
    columns: [
      "flood",
      "legitimate accepted",
      "flood answers",
      "upstream during the flood",
      "upstream / s",
      "heap Δ MiB",
      "RSS Δ MiB",
    ],
    rows: rows.map(({ name, result, upstream, upstreamName }) => [
      name,
      `${accepted(result)} / ${result.probes.length}`,
      [...result.flooded].map(([label, n]) => `${n}× ${label}`).join(", "),
      `${upstream} ${upstreamName}`,
      (upstream / (result.elapsedMs / 1000)).toFixed(1),
      heapDeltaMiB(result).toFixed(1),
      rssDeltaMiB(result).toFixed(1),
    ]),
    notes: [
      "Every server, stand-in and client runs in the bench process on loopback; the flood is sent in 10 ms ticks, never waiting for answers.",
      "Upstream / s for introspection is bounded by maxPerSecond (20); for tenants by the 10-a-second creation budget (one key-set fetch each).",
    ],
  };
  const targets: Target[] = rows.map(({ name, result }) => ({
    name: `${name}: every legitimate request accepted, memory bounded`,
    goal: `${result.probes.length} of ${result.probes.length} accepted, heap growth under 64 MiB`,
    measured: `${accepted(result)} of ${result.probes.length}, heap ${heapDeltaMiB(result).toFixed(1)} MiB`,
    met: accepted(result) === result.probes.length && heapDeltaMiB(result) < 64,
  }));
  return {
    id: "floods",
    title: "Floods that must not lock anyone out (jwt-rbac)",
    method: [
      "Introspection: 200 made-up opaque tokens a second against a real authorization-server stand-in (default maxPerSecond 20, cacheMaxSec 1), a known-active token every 100 ms.",
      "Tenants: 200 tokens a second naming random tenants a validator admits (half with keys at the identity-provider stand-in, forged; half without), maxTenantIssuers 5 and 100, a fresh token of a real tenant every 100 ms.",
      "Replay store: one DPoP client sends 200 proofs a second (replayMax 5 000, its share 500), another client one every 100 ms.",
    ],
    tables: [table],
    charts: [],
    targets,
    figures: rows.map(({ name, result, upstream, upstreamName }) => ({
      name,
      probes: result.probes.length,
      accepted: accepted(result),
      flooded: Object.fromEntries(result.flooded),
      floodCalls: result.floodCalls,
      elapsedMs: Math.round(result.elapsedMs),
      upstream,
      upstreamName,
      memory: result.memory,
    })),
  };
}
