import { type KeyObject, webcrypto } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createVerifier } from "fast-jwt";
import { verify as honoVerify } from "hono/jwt";
import { importSPKI, jwtVerify } from "jose";
import jsonwebtoken from "jsonwebtoken";
import { Bench } from "tinybench";
import { proofPool } from "./dpop-proofs.js";
import { createFloorVerifier, createSignatureVerifier } from "./floor.js";
import { ALGORITHMS, type Alg, type KeyMaterial, makeKeys, signToken } from "./keys.js";
import { BENCH_PATH, isUnavailable, loadCore, oursOptions, resolvedEntry } from "./ours.js";
import { median, ratio, sig } from "./stats.js";
import type { BarKind, GroupResult, Table, Target } from "./types.js";

const IN_FLIGHT = 32;

// A full collection before each row's CPU slice: the rotating order gives every row the same predecessor each
// round, and without it a row after one that leaves much garbage (jose, hono) paid for that garbage every time.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
/** Rounds of every row, and each row's slice of a round: the ES256 and EdDSA rows differ by about 1%, so many. */
const ROUNDS = 11;
const SLICE_MS = 100;

interface Row {
  id: RowId;
  label: string;
  kind: BarKind;
  /** Absent: the row is not measured for this algorithm; `skip` says why. */
  run?: () => unknown;
  skip?: string;
}

type RowId =
  | "floor"
  | "signatureOnly"
  | "floorAgain"
  | "jose"
  | "oursNoCache"
  | "oursCache"
  | "oursJwksUrlNoCache"
  | "oursJwksUrlCache"
  | "oursDpopCache"
  | "oursIntrospectedCache"
  | "fastJwt"
  | "fastJwtCache"
  | "jsonwebtoken"
  | "honoString"
  | "honoCryptoKey";

const LABELS: Record<RowId, [string, BarKind]> = {
  floor: ["node:crypto floor: signature + decode + alg/exp", "floor"],
  signatureOnly: ["node:crypto one-shot, signature only", "floor"],
  floorAgain: ["node:crypto floor again, last in the order (the run's resolution)", "floor"],
  jose: ["jose.jwtVerify, pre-imported CryptoKey", "peer"],
  oursNoCache: ["ours: authenticateNow(), cache off", "ours"],
  oursCache: ["ours: authenticateNow(), cache on, same token", "ours"],
  oursJwksUrlNoCache: ["ours: jwksUrl, cache off", "ours"],
  oursJwksUrlCache: ["ours: jwksUrl, cache on, same token", "ours"],
  oursDpopCache: ["ours: DPoP-bound token, cache on + ES256 proof", "ours"],
  oursIntrospectedCache: ["ours: introspected opaque token, cache on", "ours"],
  fastJwt: ["fast-jwt createVerifier, no cache", "peer"],
  fastJwtCache: ["fast-jwt createVerifier, cache, same token", "peer"],
  jsonwebtoken: ["jsonwebtoken.verify, KeyObject", "peer"],
  honoString: ["hono/jwt verify, key as string", "peer"],
  honoCryptoKey: ["hono/jwt verify, CryptoKey", "peer"],
};

interface Figures {
  /** Median over rounds of the per-round median latency, one at a time, µs. */
  latencyUs: number;
  /** Median over rounds of (process CPU time / ops) with 32 verifications in flight, µs. */
  cpuUs: number;
  /** Wall-clock throughput with 32 in flight, ops/s. */
  opsPerSecond: number;
  /** CPU µs/op of each round, in round order: rows of one round are measured side by side. */
  cpuRounds: number[];
}

type AlgResult = Partial<Record<RowId, Figures | { skipped: string }>>;

async function importForJose(keys: KeyMaterial): Promise<webcrypto.CryptoKey> {
  if (keys.alg === "HS256") {
    return webcrypto.subtle.importKey(
      "raw",
      Buffer.from(keys.verificationText, "utf8"),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
  }
  return importSPKI(keys.verificationText, keys.alg);
}

/** DPoP proofs signed per algorithm before measuring: enough for every run of the row, each used once. */
const DPOP_PROOFS = 60_000;
const DPOP_URL = `http://bench.local${BENCH_PATH}`;

/** A local introspection endpoint for the introspected row: every token is active. */
let introspectionServer: Server | undefined;

async function serveIntrospection(): Promise<string> {
  if (introspectionServer === undefined) {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          active: true,
          sub: "bench",
          scope: "bench:read",
          exp: Math.floor(Date.now() / 1000) + 3600,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    introspectionServer = server;
  }
  return `http://127.0.0.1:${(introspectionServer.address() as AddressInfo).port}/introspect`;
}

/** A local JWKS endpoint for the jwksUrl rows: one path per algorithm, closed after the group. */
let jwksServer: Server | undefined;
const servedJwks = new Map<string, unknown>();

async function serveJwks(alg: Alg, verifyKey: KeyObject): Promise<string> {
  servedJwks.set(`/${alg}`, { keys: [{ ...verifyKey.export({ format: "jwk" }), alg, use: "sig" }] });
  if (jwksServer === undefined) {
    const server = createServer((req, res) => {
      const body = servedJwks.get(req.url ?? "");
      res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(body ?? {}));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    jwksServer = server;
  }
  return `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/${alg}`;
}

async function buildRows(keys: KeyMaterial, token: string): Promise<Row[]> {
  const alg = keys.alg;
  const row = (id: RowId, run: (() => unknown) | string): Row => {
    const [label, kind] = LABELS[id];
    return typeof run === "string" ? { id, label, kind, skip: run } : { id, label, kind, run };
  };
  const floor = createFloorVerifier(alg, keys.verifyKey);
  const signatureOnly = createSignatureVerifier(alg, keys.verifyKey);
  const joseKey = await importForJose(keys);
  const rows: Row[] = [
    row("floor", () => floor(token)),
    row("signatureOnly", () => signatureOnly(token)),
    row("jose", () => jwtVerify(token, joseKey, { algorithms: [alg] })),
  ];
  const createJwtAuth = await loadCore();
  const input = { method: "GET", path: BENCH_PATH, headers: { authorization: `Bearer ${token}` } };
  if (isUnavailable(createJwtAuth)) {
    for (const id of [
      "oursNoCache",
      "oursCache",
      "oursJwksUrlNoCache",
      "oursJwksUrlCache",
      "oursDpopCache",
      "oursIntrospectedCache",
    ] as const)
      rows.push(row(id, createJwtAuth.unavailable));
  } else {
    const noCache = createJwtAuth(oursOptions(keys, { authorization: false, cache: false }));
    const cached = createJwtAuth(oursOptions(keys, { authorization: false }));
    rows.push(
      row("oursNoCache", () => noCache.authenticateNow(input)),
      row("oursCache", () => cached.authenticateNow(input)),
    );
    // A token bound to the bench client's key; each request carries a fresh proof (the default in-memory replay
    // store sees every jti once), so this is a token cache hit plus one ES256 proof verification.
    const client = proofPool();
    const bound = signToken(keys, { cnf: { jkt: client.jkt } });
    const proofs = await client.proofs("GET", DPOP_URL, bound, DPOP_PROOFS);
    const dpop = createJwtAuth({
      ...oursOptions(keys, { authorization: false }),
      publicOrigin: new URL(DPOP_URL).origin,
      dpop: { maxAgeSec: 3600 },
    });
    let next = 0;
    rows.push(
      row("oursDpopCache", () =>
        dpop.authenticateNow({
          method: "GET",
          path: BENCH_PATH,
          url: DPOP_URL,
          headers: { authorization: `DPoP ${bound}`, dpop: proofs[next++ % DPOP_PROOFS] as string },
        }),
      ),
    );
    const introspected = createJwtAuth({
      ...oursOptions(keys, { authorization: false }),
      introspection: {
        url: await serveIntrospection(),
        clientAuth: { method: "client_secret_basic", clientId: "bench", clientSecret: "bench-secret" },
      },
    });
    const opaqueInput = {
      method: "GET",
      path: BENCH_PATH,
      headers: { authorization: "Bearer opaque-bench-token" },
    };
    // Twice before measuring: the verified-token cache admits a token on its second sighting.
    await introspected.authenticateNow(opaqueInput);
    rows.push(row("oursIntrospectedCache", () => introspected.authenticateNow(opaqueInput)));
    if (alg === "HS256") {
      const why = "a JWKS URL serves public keys, never an HMAC secret";
      rows.push(row("oursJwksUrlNoCache", why), row("oursJwksUrlCache", why));
    } else {
      // The same key served over HTTP by a local JWKS endpoint; the first (checking) run fetches it.
      const jwksUrl = await serveJwks(alg, keys.verifyKey);
      const remote = (cache?: false) =>
        createJwtAuth({
          jwksUrl,
          algorithm: alg,
          authorization: false,
          ...(cache === false ? { cache } : {}),
        });
      const remoteNoCache = remote(false);
      const remoteCached = remote();
      rows.push(
        row("oursJwksUrlNoCache", () => remoteNoCache.authenticateNow(input)),
        row("oursJwksUrlCache", () => remoteCached.authenticateNow(input)),
      );
    }
  }
  const fastJwt = createVerifier({ key: keys.verificationText, algorithms: [alg], cache: false });
  const fastJwtCache = createVerifier({ key: keys.verificationText, algorithms: [alg], cache: true });
  rows.push(
    row("fastJwt", () => fastJwt(token)),
    row("fastJwtCache", () => fastJwtCache(token)),
  );
  rows.push(
    row(
      "jsonwebtoken",
      alg === "EdDSA"
        ? "jsonwebtoken 9 does not support EdDSA"
        : () => jsonwebtoken.verify(token, keys.verifyKey, { algorithms: [alg] }),
    ),
  );
  rows.push(
    row("honoString", () => honoVerify(token, keys.verificationText, alg)),
    row("honoCryptoKey", () => honoVerify(token, joseKey, alg)),
  );
  // The floor once more, as far from the first in the rotating order as ours is from fast-jwt: how far apart two
  // measurements of the same code land in this run.
  const floorAgain = createFloorVerifier(alg, keys.verifyKey);
  rows.push(row("floorAgain", () => floorAgain(token)));
  return rows;
}

/** Runs every row once and checks it accepted the token: a verifier that silently rejects would look fast. */
async function check(row: Row): Promise<Row> {
  if (!row.run) return row;
  try {
    const result = await row.run();
    const rejected =
      result === false ||
      result === undefined ||
      result === null ||
      (typeof result === "object" && "ok" in result && (result as { ok: unknown }).ok !== true);
    if (rejected) return { id: row.id, label: row.label, kind: row.kind, skip: "rejected the valid token" };
  } catch (error) {
    return {
      id: row.id,
      label: row.label,
      kind: row.kind,
      skip: `threw on the valid token: ${(error as Error).message}`,
    };
  }
  return row;
}

async function cpuPerOp(
  run: () => unknown,
  budgetMs: number,
): Promise<{ cpuUs: number; opsPerSecond: number }> {
  const batch: unknown[] = new Array(IN_FLIGHT);
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  let ops = 0;
  while (performance.now() - wallStart < budgetMs) {
    for (let i = 0; i < IN_FLIGHT; i++) batch[i] = run();
    await Promise.all(batch);
    ops += IN_FLIGHT;
  }
  const wallMs = performance.now() - wallStart;
  const cpu = process.cpuUsage(cpuStart);
  return { cpuUs: (cpu.user + cpu.system) / ops, opsPerSecond: (ops / wallMs) * 1000 };
}

async function measureAlg(alg: Alg, quick: boolean): Promise<AlgResult> {
  const keys = makeKeys(alg);
  const token = signToken(keys);
  const rows = await Promise.all((await buildRows(keys, token)).map(check));
  const live = rows.filter((r): r is Row & { run: () => unknown } => r.run !== undefined);
  // Many short rounds rather than a few long ones: on a shared machine a burst of outside load then lands on
  // one slice of every row instead of on all of one row, and the median discards it.
  const rounds = quick ? 1 : ROUNDS;
  const sliceMs = quick ? 10 : SLICE_MS;
  const samples = new Map<RowId, { latency: number[]; cpu: number[]; ops: number[] }>();
  for (const r of live) samples.set(r.id, { latency: [], cpu: [], ops: [] });
  for (let round = 0; round < rounds; round++) {
    // Rotate the order every round so no row always runs first (after a GC) or last.
    const order = live.map((_, i) => live[(i + round) % live.length] as (typeof live)[number]);
    const bench = new Bench({
      time: sliceMs,
      warmup: round === 0,
      warmupTime: quick ? 5 : 150,
      timestampProvider: "hrtimeNow",
    });
    for (const r of order) bench.add(r.id, r.run);
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (result.state !== "completed")
        throw new Error(`${alg} ${task.name}: tinybench state ${result.state}`);
      samples.get(task.name as RowId)?.latency.push(result.latency.p50 * 1000);
    }
    for (const r of order) {
      collectGarbage();
      const { cpuUs, opsPerSecond } = await cpuPerOp(r.run, sliceMs);
      const s = samples.get(r.id);
      s?.cpu.push(cpuUs);
      s?.ops.push(opsPerSecond);
    }
  }
  const result: AlgResult = {};
  for (const r of rows) {
    const s = samples.get(r.id);
    result[r.id] = s
      ? { latencyUs: median(s.latency), cpuUs: median(s.cpu), opsPerSecond: median(s.ops), cpuRounds: s.cpu }
      : { skipped: r.skip ?? "not measured" };
  }
  return result;
}

/**
 * CPU of `a` ÷ `b`, paired: the median over rounds of the two rows' ratio within each round. Rows a fraction of a
 * percent apart (ES256 and EdDSA, where the signature check is nearly all of the cost) are compared in the same
 * stretch of the machine's time, so drift between rounds does not decide which is cheaper.
 */
function pairedCpuRatio(a: Figures, b: Figures): number {
  return median(a.cpuRounds.map((cpu, round) => cpu / (b.cpuRounds[round] as number)));
}

function figures(result: AlgResult, id: RowId): Figures | undefined {
  const f = result[id];
  return f && "cpuUs" in f ? f : undefined;
}

export async function runVerifyGroup(options: { quick: boolean }): Promise<GroupResult> {
  const results = {} as Record<Alg, AlgResult>;
  for (const alg of ALGORITHMS) {
    console.log(`verify: ${alg}`);
    results[alg] = await measureAlg(alg, options.quick);
  }
  const ids = Object.keys(LABELS) as RowId[];
  // One footnote per row and reason, naming the algorithms it applies to.
  const skipNotes = new Map<string, Alg[]>();
  for (const alg of ALGORITHMS)
    for (const id of ids) {
      const entry = results[alg][id];
      if (!entry || !("skipped" in entry)) continue;
      const key = `${LABELS[id][0]}: ${entry.skipped}`;
      skipNotes.set(key, [...(skipNotes.get(key) ?? []), alg]);
    }
  const notes = [...skipNotes].map(([text, algs]) => `n/a — ${text} (${algs.join(", ")})`);
  const cell = (alg: Alg, id: RowId, metric: "cpuUs" | "latencyUs") => {
    const f = figures(results[alg], id);
    const floor = figures(results[alg], "floor");
    return f && floor ? `${sig(f[metric])} µs (${ratio(f[metric], floor[metric])})` : "n/a";
  };
  const perAlgTable = (title: string, metric: "cpuUs" | "latencyUs"): Table => ({
    title,
    columns: ["verifier", ...ALGORITHMS],
    rows: ids.map((id) => [LABELS[id][0], ...ALGORITHMS.map((alg) => cell(alg, id, metric))]),
    notes,
  });
  const peers: RowId[] = ["jose", "fastJwt", "jsonwebtoken", "honoString", "honoCryptoKey"];
  const versus = (ours: RowId, others: RowId[]): string[][] =>
    others.map((peer) => [
      `${LABELS[ours][0]} ÷ ${LABELS[peer][0]}`,
      ...ALGORITHMS.map((alg) => {
        const a = figures(results[alg], ours);
        const b = figures(results[alg], peer);
        return a && b ? ratio(a.cpuUs, b.cpuUs) : "n/a";
      }),
    ]);
  const tables: Table[] = [
    perAlgTable(
      `CPU per verification with ${IN_FLIGHT} in flight (process CPU time ÷ ops; × floor)`,
      "cpuUs",
    ),
    perAlgTable("One-at-a-time latency, median (× floor)", "latencyUs"),
    {
      title: `Throughput with ${IN_FLIGHT} in flight, ops/s (wall clock; WebCrypto spreads over the thread pool)`,
      columns: ["verifier", ...ALGORITHMS],
      rows: ids.map((id) => [
        LABELS[id][0],
        ...ALGORITHMS.map((alg) => {
          const f = figures(results[alg], id);
          return f ? sig(f.opsPerSecond) : "n/a";
        }),
      ]),
    },
    {
      title: "Ours against each peer: CPU per op with 32 in flight, ours ÷ peer (below 1 = ours is cheaper)",
      columns: ["ratio", ...ALGORITHMS],
      rows: [
        ...versus("oursNoCache", peers),
        ...versus("oursCache", ["fastJwtCache"]),
        ...versus("oursJwksUrlCache", ["oursCache"]),
        ...versus("oursJwksUrlNoCache", ["oursNoCache"]),
        ...versus("oursIntrospectedCache", ["oursCache"]),
      ],
    },
  ];
  const targets: Target[] = ALGORITHMS.map((alg) => {
    const ours = figures(results[alg], "oursNoCache");
    const floor = figures(results[alg], "floor");
    const fastJwt = figures(results[alg], "fastJwt");
    // The target: at or below fast-jwt (no cache) in the same run, and at most 1.1x the floor.
    const goal = "CPU/op (32 in flight) ≤ fast-jwt's and ≤ 1.1x node:crypto floor";
    if (!ours || !floor)
      return {
        name: `Uncached verification, ${alg}`,
        goal,
        measured: "not measured: ours unavailable",
        met: null,
      };
    // Paired within rounds (see pairedCpuRatio); the tables show the ratio of the medians.
    const r = pairedCpuRatio(ours, floor);
    const peer = fastJwt ? pairedCpuRatio(ours, fastJwt) : undefined;
    const again = figures(results[alg], "floorAgain");
    const resolution = again ? `; the floor measured twice: ${pairedCpuRatio(again, floor).toFixed(3)}x` : "";
    return {
      name: `Uncached verification, ${alg}`,
      goal,
      measured: `${sig(ours.cpuUs)} µs vs ${sig(floor.cpuUs)} µs: ${r.toFixed(3)}x the floor, ${peer === undefined ? "fast-jwt not measured" : `${peer.toFixed(3)}x fast-jwt`} (medians of per-round ratios)${resolution}`,
      met: r <= 1.1 && (peer === undefined || peer <= 1),
    };
  });
  const cacheRatios = ALGORITHMS.map((alg) => {
    const ours = figures(results[alg], "oursCache");
    const peer = figures(results[alg], "fastJwtCache");
    return ours && peer
      ? { alg, ours, peer, r: ours.cpuUs / peer.cpuUs, l: ours.latencyUs / peer.latencyUs }
      : null;
  });
  const measuredCache = cacheRatios.filter((c) => c !== null);
  targets.push({
    name: "Cache hit",
    goal: "CPU/op and latency ≤ fast-jwt cache hit",
    measured:
      measuredCache.length === 0
        ? "not measured: ours unavailable"
        : measuredCache
            .map(
              (c) =>
                `${c.alg} ${sig(c.ours.cpuUs)} vs ${sig(c.peer.cpuUs)} µs CPU (${c.r.toFixed(2)}x), latency ${c.l.toFixed(2)}x`,
            )
            .join("; "),
    met: measuredCache.length === 0 ? null : measuredCache.every((c) => c.r <= 1 && c.l <= 1),
  });
  const dpopRows = ALGORITHMS.map((alg) => {
    const dpop = figures(results[alg], "oursDpopCache");
    const bearer = figures(results[alg], "oursNoCache");
    const proof = figures(results.ES256, "signatureOnly");
    return dpop && bearer && proof ? { alg, r: dpop.cpuUs / (bearer.cpuUs + proof.cpuUs) } : null;
  }).filter((entry) => entry !== null);
  targets.push({
    name: "DPoP-bound request",
    goal: "CPU/op ≤ 1.3x (uncached bearer request + one ES256 signature check at the floor)",
    measured:
      dpopRows.length === 0
        ? "not measured: ours unavailable"
        : dpopRows.map((d) => `${d.alg} ${d.r.toFixed(2)}x`).join("; "),
    met: dpopRows.length === 0 ? null : dpopRows.every((d) => d.r <= 1.3),
  });
  const introspectedHits = ALGORITHMS.map((alg) => {
    const hit = figures(results[alg], "oursIntrospectedCache");
    const jwt = figures(results[alg], "oursCache");
    return hit && jwt ? { alg, r: hit.cpuUs / jwt.cpuUs, l: hit.latencyUs / jwt.latencyUs } : null;
  }).filter((entry) => entry !== null);
  targets.push({
    name: "Introspected token cache hit",
    goal: "CPU/op and latency ≤ 1.2x a JWT cache hit",
    measured:
      introspectedHits.length === 0
        ? "not measured: ours unavailable"
        : introspectedHits
            .map((h) => `${h.alg} ${h.r.toFixed(2)}x CPU, ${h.l.toFixed(2)}x latency`)
            .join("; "),
    met: introspectedHits.length === 0 ? null : introspectedHits.every((h) => h.r <= 1.2 && h.l <= 1.2),
  });
  for (const server of [jwksServer, introspectionServer]) {
    await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  }
  jwksServer = undefined;
  introspectionServer = undefined;
  const jwksHits = ALGORITHMS.map((alg) => {
    const remote = figures(results[alg], "oursJwksUrlCache");
    const inline = figures(results[alg], "oursCache");
    return remote && inline
      ? { alg, r: remote.cpuUs / inline.cpuUs, l: remote.latencyUs / inline.latencyUs }
      : null;
  }).filter((hit) => hit !== null);
  targets.push({
    name: "jwksUrl cache hit",
    goal: "CPU/op and latency ≤ 1.1x the inline-key cache hit",
    measured:
      jwksHits.length === 0
        ? "not measured: ours unavailable"
        : jwksHits.map((h) => `${h.alg} ${h.r.toFixed(2)}x CPU, ${h.l.toFixed(2)}x latency`).join("; "),
    met: jwksHits.length === 0 ? null : jwksHits.every((h) => h.r <= 1.1 && h.l <= 1.1),
  });
  return {
    id: "verify",
    title: "1. Token verification, per operation",
    method: [
      "One key pair per algorithm (RSA 2048, P-256, Ed25519, a 32-byte HMAC secret) and one token per algorithm, made once; every verifier gets its key in the form it takes pre-imported (KeyObject, CryptoKey, PEM string for fast-jwt and hono's string row).",
      `Each row is first run once and must accept the token. Then ${options.quick ? 1 : ROUNDS} rounds, each round rotating the row order: one-at-a-time latency with tinybench (median of the round), then CPU per op with ${IN_FLIGHT} verifications in flight for ${SLICE_MS} ms (process.cpuUsage() across batches of ${IN_FLIGHT} concurrent calls, which counts libuv's thread pool, ÷ ops). Figures are the median over rounds.`,
      "The floor is signature + decode + alg/exp check: header and payload base64url-decoded and JSON-parsed, `alg` compared, `exp` checked, then the signature (node:crypto one-shot `verify`, or `createHmac` + `timingSafeEqual`, over the signing input with a KeyObject made once). The signature-only row is that last step alone (the DPoP target's proof check). The floor is measured a second time, last in the rotating order: the two differ only by where and when they ran, which is this run's resolution for rows that close.",
      `Ours runs \`createJwtAuth({ verificationKeys: [key], algorithm, authorization: false, cache })\` → \`authenticateNow({ method, path, headers })\` (what every adapter calls; synchronous once the keys are loaded), i.e. token extraction, path reading and auth-state building included; cache on = the package default cache. \`@agent-platform/jwt-rbac\` resolved to \`${resolvedEntry("@agent-platform/jwt-rbac")}\`.`,
      "DPoP row: the token carries `cnf.jkt` of the bench client's P-256 key and each call a fresh ES256 proof (signed before measuring, 60 000 per algorithm), through `dpop: {}` with its in-memory replay store: a token cache hit plus one proof check. Introspected row: an opaque token answered active by a local introspection endpoint, served from the caches after the first two calls.",
    ],
    tables,
    charts: [
      {
        title: "CPU per verification, 32 in flight, × node:crypto floor",
        unit: "× floor (CPU time per op)",
        higherIsBetter: false,
        reference: 1,
        sections: ALGORITHMS.map((alg) => ({
          name: alg,
          bars: ids.map((id) => {
            const f = figures(results[alg], id);
            const floor = figures(results[alg], "floor");
            const [label, kind] = LABELS[id];
            return f && floor
              ? { label, kind, value: f.cpuUs / floor.cpuUs }
              : { label, kind, value: null, note: "not measured (see table)" };
          }),
        })),
      },
    ],
    targets,
    figures: results,
  };
}
