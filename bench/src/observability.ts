import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createTestDatabase, type TestDatabase } from "@agent-platform/test-support/database";
import { whatsAppSignature } from "@agent-platform/test-support/webhook-signatures";
import { uninstrumentedCheckout } from "./base-build.js";
import { interleavedCpuRounds, medianRoundRatio, roundRatios } from "./interleave.js";
import { type Alg, exportKeys, makeKeys, signToken } from "./keys.js";
import {
  type LoadResult,
  PreparedRequests,
  runLoad,
  type ServerProcess,
  startServerProcess,
} from "./load.js";
import { BENCH_PATH, type CreateJwtAuth, oursOptions } from "./ours.js";
import { ROOT } from "./report.js";
import { median, sig } from "./stats.js";
import type { GroupResult, Table, Target } from "./types.js";
import { delivery, referenceServerEnv } from "./webhook.js";

/** Instrumentation present but off (no `onDecision`, no tracer provider, no METRICS_PORT): at most this × the build without it. */
const OFF_LIMIT = 1.02;
/** METRICS_PORT set (tracing off): at most this × the server CPU per request without it. */
const METRICS_LIMIT = 1.05;
/** The webhook group's burst load, where its published targets are taken. */
const WEBHOOK_CONNECTIONS = 100;
/** The http group's load. */
const HONO_CONNECTIONS = 10;
/** Deliveries signed ahead per second of a load run (as in the webhook group). */
const PREPARED_PER_SECOND = 8_000;
/** A JWT-protected route of the reference server (the platform policy maps it to `config:read`). */
const MIGRATIONS_PATH = "/databases/default/migrations";
const MIGRATIONS_SCOPE = "config:read";

/**
 * Many short rounds (each variant about 10 ms of CPU a round) rather than a few long ones: load from elsewhere
 * changes within a second, and only what stays put across one round cancels out of its ratio.
 */
const VERIFY_ROUNDS = 201;

interface VerifyCase {
  label: string;
  alg: Alg;
  cached: boolean;
  ops: number;
}
const VERIFY_CASES: VerifyCase[] = [
  { label: "verify HS256, uncached", alg: "HS256", cached: false, ops: 1_500 },
  { label: "verify RS256, uncached", alg: "RS256", cached: false, ops: 300 },
  { label: "verify HS256, cache hit", alg: "HS256", cached: true, ops: 15_000 },
];

interface Comparison {
  row: string;
  metric: string;
  /** Median over rounds of measured ÷ base, both measured in the same round. */
  ratio: number;
  /** Median over rounds of base ÷ a second copy of base (the same code): the noise floor of the comparison. */
  control?: number;
  measured: number;
  base: number;
  rounds: { measured: number[]; base: number[] };
}

/** `authenticateNow` of each build on one token, interleaved round by round in this process (as ab-verify does). */
async function verifyComparisons(baseDir: string, quick: boolean): Promise<Comparison[]> {
  const out: Comparison[] = [];
  for (const c of VERIFY_CASES) {
    const keys = makeKeys(c.alg);
    const input = {
      method: "GET",
      path: BENCH_PATH,
      headers: { authorization: `Bearer ${signToken(keys)}` },
    };
    const make = async (dir: string, copy: string) => {
      // A query string makes a second, separate instance of the same file: the A/A control.
      const entry = `${pathToFileURL(join(dir, "packages", "jwt-rbac", "dist", "node", "index.js")).href}${copy}`;
      const { createJwtAuth } = (await import(entry)) as { createJwtAuth: CreateJwtAuth };
      const auth = createJwtAuth(
        oursOptions(keys, { authorization: true, ...(c.cached ? {} : { cache: false }) }),
      );
      await (auth as unknown as { ready?: Promise<void> }).ready;
      if (!(auth.authenticateNow(input) as { ok?: boolean }).ok)
        throw new Error(`${dir}: the token was refused`);
      return () => auth.authenticateNow(input);
    };
    const variants = [
      ["base", await make(baseDir, "")],
      ["base copy", await make(baseDir, "?copy")],
      ["measured", await make(ROOT, "")],
    ] as const;
    console.log(`observability: ${c.label}`);
    const samples = interleavedCpuRounds(variants, {
      rounds: quick ? 21 : VERIFY_ROUNDS,
      ops: c.ops,
    });
    const base = samples.get("base") ?? [];
    const measured = samples.get("measured") ?? [];
    out.push({
      row: c.label,
      metric: "CPU µs/op",
      ratio: medianRoundRatio(measured, base),
      control: medianRoundRatio(samples.get("base copy") ?? [], base),
      measured: median(measured),
      base: median(base),
      rounds: { measured, base },
    });
  }
  return out;
}

/** Server processes measured in interleaved load rounds (order turned each round); server CPU µs per 2xx answer. */
async function interleavedLoad(
  servers: Map<string, ServerProcess>,
  load: (name: string, server: ServerProcess, seconds: number) => Parameters<typeof runLoad>[0],
  options: { rounds: number; durationSeconds: number; warmupSeconds: number; label: string },
): Promise<Map<string, LoadResult[]>> {
  const names = [...servers.keys()];
  const results = new Map<string, LoadResult[]>(names.map((name) => [name, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length] as string;
      console.log(`observability: ${options.label} round ${round + 1}/${options.rounds} ${name}`);
      const warmupSeconds = round === 0 ? options.warmupSeconds : 0;
      const result = await runLoad({
        ...load(name, servers.get(name) as ServerProcess, options.durationSeconds + warmupSeconds),
        durationSeconds: options.durationSeconds,
        warmupSeconds,
      });
      results.get(name)?.push(result);
    }
  }
  return results;
}

function loadComparison(
  row: string,
  results: Map<string, LoadResult[]>,
  measuredName: string,
  baseName: string,
): Comparison {
  const cpu = (name: string) => (results.get(name) ?? []).map((r) => r.serverCpuUsPerRequest ?? Number.NaN);
  const measured = cpu(measuredName);
  const base = cpu(baseName);
  return {
    row,
    metric: "server CPU µs/req",
    ratio: medianRoundRatio(measured, base),
    measured: median(measured),
    base: median(base),
    rounds: { measured, base },
  };
}

const invalidRounds = (results: Map<string, LoadResult[]>) =>
  [...results.entries()].flatMap(([name, rounds]) => {
    const non2xx = rounds.reduce((n, r) => n + r.non2xx + r.errors, 0);
    return non2xx === 0 ? [] : [`${name}: ${non2xx} non-2xx answers or errors`];
  });

/** Hono + ours, one token on every request, HS256: the http group's server script of each checkout. */
async function honoComparison(
  baseDir: string,
  s: { rounds: number; durationSeconds: number; warmupSeconds: number },
): Promise<{ comparison: Comparison; invalid: string[] }> {
  const keys = makeKeys("HS256");
  const env = { BENCH_KEYS: JSON.stringify(exportKeys(keys)) };
  const script = (dir: string) => join(dir, "bench", "src", "servers", "http-server.ts");
  const servers = new Map<string, ServerProcess>();
  try {
    servers.set("base", await startServerProcess(script(baseDir), ["hono-ours", "base"], env));
    servers.set("measured", await startServerProcess(script(ROOT), ["hono-ours", "measured"], env));
    const headers = { authorization: `Bearer ${signToken(keys)}` };
    const results = await interleavedLoad(
      servers,
      (_name, server) => ({
        url: `http://127.0.0.1:${server.port}${BENCH_PATH}`,
        connections: HONO_CONNECTIONS,
        headers,
        serverPid: server.pid,
        durationSeconds: 0,
        warmupSeconds: 0,
      }),
      { ...s, label: "Hono + ours, same token" },
    );
    return {
      comparison: loadComparison(
        `Hono + ours, same token (HS256, ${HONO_CONNECTIONS} connections)`,
        results,
        "measured",
        "base",
      ),
      invalid: invalidRounds(results),
    };
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
  }
}

/**
 * The reference server's signed webhook acknowledgement (worker held back), three processes each on a database of
 * its own: the uninstrumented build, this build, and this build with METRICS_PORT set.
 */
async function webhookComparisons(
  baseDir: string,
  databaseUrl: string,
  s: { rounds: number; durationSeconds: number; warmupSeconds: number },
): Promise<{ off: Comparison[]; metrics: Comparison[]; invalid: string[] }> {
  const script = (dir: string) => join(dir, "bench", "src", "servers", "reference-server.ts");
  const appSecret = randomBytes(24).toString("hex");
  // An RS256 key for the authenticated route, whose token (one scope, the same on every request) is a cache hit.
  const keys = makeKeys("RS256");
  const held = {
    MESSAGING_WORKER_START_DELAY_MS: "86400000",
    JWT_VERIFICATION_KEY: keys.verificationText,
    JWT_ALGORITHM: "RS256",
  };
  const bearer = { authorization: `Bearer ${signToken(keys, { scopes: [MIGRATIONS_SCOPE] })}` };
  const setups = [
    ["base", baseDir, held],
    ["measured", ROOT, held],
    ["measured, METRICS_PORT set", ROOT, { ...held, METRICS_PORT: "0" }],
  ] as const;
  const databases: TestDatabase[] = [];
  const dataDirs: string[] = [];
  const servers = new Map<string, ServerProcess>();
  try {
    for (const [name, dir, extra] of setups) {
      const database = await createTestDatabase("bench_observability", databaseUrl);
      databases.push(database);
      const dataDir = mkdtempSync(join(tmpdir(), "bench-observability-"));
      dataDirs.push(dataDir);
      servers.set(
        name,
        await startServerProcess(
          script(dir),
          [],
          referenceServerEnv(database.url, dataDir, appSecret, { ...extra }),
        ),
      );
    }
    const runId = randomBytes(4).toString("hex");
    let made = 0;
    const signed = () => {
      const body = Buffer.from(delivery(`wamid.observability.${runId}.${made++}`));
      return {
        headers: {
          "content-type": "application/json",
          "x-hub-signature-256": whatsAppSignature(body, appSecret),
        },
        body,
      };
    };
    const results = await interleavedLoad(
      servers,
      (_name, server, seconds) => {
        const prepared = new PreparedRequests(signed, Math.ceil(PREPARED_PER_SECOND * seconds));
        return {
          url: `http://127.0.0.1:${server.port}/whatsapp/webhook`,
          method: "POST",
          connections: WEBHOOK_CONNECTIONS,
          perRequest: () => prepared.next(),
          serverPid: server.pid,
          durationSeconds: 0,
          warmupSeconds: 0,
        };
      },
      { ...s, label: "webhook acknowledgement" },
    );
    const authenticated = await interleavedLoad(
      servers,
      (_name, server) => ({
        url: `http://127.0.0.1:${server.port}${MIGRATIONS_PATH}`,
        connections: HONO_CONNECTIONS,
        headers: bearer,
        serverPid: server.pid,
        durationSeconds: 0,
        warmupSeconds: 0,
      }),
      { ...s, label: "reference server, authenticated GET" },
    );
    const rows = [
      [`POST /whatsapp/webhook (${WEBHOOK_CONNECTIONS} connections)`, results],
      [`reference server GET ${MIGRATIONS_PATH} with a JWT (${HONO_CONNECTIONS} connections)`, authenticated],
    ] as const;
    return {
      off: rows.map(([row, r]) => loadComparison(row, r, "measured", "base")),
      metrics: rows.map(([row, r]) =>
        loadComparison(`${row}, METRICS_PORT set`, r, "measured, METRICS_PORT set", "measured"),
      ),
      invalid: [...invalidRounds(results), ...invalidRounds(authenticated)],
    };
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    for (const database of databases) await database.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** The middle half of the per-round ratios: how far the rounds scattered. */
function quartiles(c: Comparison): string {
  const ratios = roundRatios(c.rounds.measured, c.rounds.base);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))] ?? Number.NaN;
  return `${at(0.25).toFixed(3)}–${at(0.75).toFixed(3)}`;
}

const pct = (ratio: number) => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)}%`;

export async function runObservabilityGroup(options: { quick: boolean }): Promise<GroupResult> {
  const id = "observability";
  const title = "6. Cost of the observability instrumentation (metrics, tracing, decision audit)";
  const { dir: baseDir, commit } = uninstrumentedCheckout((line) => console.log(line));
  const http = {
    rounds: options.quick ? 2 : 15,
    durationSeconds: options.quick ? 1 : 1.5,
    warmupSeconds: options.quick ? 0 : 1,
  };
  const verify = await verifyComparisons(baseDir, options.quick);
  const hono = await honoComparison(baseDir, http);
  const databaseUrl = process.env.TEST_DATABASE_URL;
  const webhook =
    databaseUrl === undefined ? undefined : await webhookComparisons(baseDir, databaseUrl, http);
  const invalid = [...hono.invalid, ...(webhook?.invalid ?? [])];
  const valid = invalid.length === 0;
  const offRows = [...verify, hono.comparison, ...(webhook?.off ?? [])];
  const describe = (c: Comparison) =>
    `${pct(c.ratio)} (${sig(c.measured)} vs ${sig(c.base)} ${c.metric}, medians${c.control === undefined ? "" : `; the same code against itself: ${pct(c.control)}`})${valid ? "" : " (INVALID RUN)"}`;
  const targets: Target[] = [
    ...offRows.map((c) => ({
      name: `Instrumentation off: ${c.row}`,
      goal: `within ${Math.round((OFF_LIMIT - 1) * 100)}% of the build without it (${c.metric})`,
      measured: describe(c),
      met: valid && Number.isFinite(c.ratio) ? c.ratio <= OFF_LIMIT : null,
    })),
    ...(webhook === undefined
      ? [
          {
            name: "Metrics on: the reference server's server CPU per request",
            goal: `≤ +${Math.round((METRICS_LIMIT - 1) * 100)}% server CPU per request`,
            measured: "not measured: TEST_DATABASE_URL is not set",
            met: null,
          },
        ]
      : webhook.metrics.map((c) => ({
          name: `Metrics on: ${c.row}`,
          goal: `≤ +${Math.round((METRICS_LIMIT - 1) * 100)}% server CPU per request`,
          measured: describe(c),
          met: valid && Number.isFinite(c.ratio) ? c.ratio <= METRICS_LIMIT : null,
        }))),
  ];
  const rows = [...offRows, ...(webhook?.metrics ?? [])];
  const table: Table = {
    title: "Instrumented build against the build without it, interleaved rounds",
    columns: [
      "row",
      "compared",
      "metric",
      "measured",
      "base",
      "median per-round ratio",
      "middle half of the rounds",
      "A/A control",
    ],
    rows: rows.map((c) => [
      c.row,
      webhook?.metrics.includes(c) ? "METRICS_PORT set vs unset" : `this build vs ${commit.slice(0, 7)}`,
      c.metric,
      sig(c.measured),
      sig(c.base),
      `${c.ratio.toFixed(3)}x`,
      quartiles(c),
      c.control === undefined ? "" : `${c.control.toFixed(3)}x`,
    ]),
    notes: [
      ...(webhook === undefined ? ["webhook rows skipped: TEST_DATABASE_URL is not set"] : []),
      ...(valid ? [] : [`invalid run: ${invalid.join("; ")}`]),
    ],
  };
  return {
    id,
    title,
    method: [
      `The base is a real build of commit \`${commit.slice(0, 12)}\`, the last before metrics, tracing and the decision audit entered the packages: a \`git worktree\` of it, installed from the pnpm store and built (\`bench/src/base-build.ts\`; \`BENCH_BASE_DIR\` or \`BENCH_UNINSTRUMENTED_COMMIT\` choose another). Off means no \`onDecision\`, no OpenTelemetry SDK registered, no \`METRICS_PORT\`.`,
      `Verification: \`authenticateNow\` of each build's jwt-rbac (authorization on, one scope on the route) on one token, in this process, ${options.quick ? 21 : VERIFY_ROUNDS} interleaved rounds of about 10 ms of CPU per variant, the order turned each round; the A/A control is a second instance of the base build's module, measured in the same rounds, and shows how far two copies of the same code drift apart here.`,
      `HTTP: each checkout's own bench server script (\`hono-ours\`; the reference server with its worker held back, on a database of its own), ${http.rounds} interleaved rounds of ${http.durationSeconds} s (first round after ${http.warmupSeconds} s warm-up), the order turned each round. Server CPU per 2xx answer from /proc.`,
      "Every ratio is the median over rounds of (measured ÷ base) within the same round, so load from elsewhere on the shared machine, which moves both sides of a round alike, cancels out.",
    ],
    tables: [table],
    charts: [],
    targets,
    figures: { baseCommit: commit, comparisons: rows },
  };
}
