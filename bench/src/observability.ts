import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "@agent-platform/test-support/database";
import { INSTRUMENTATION_LABEL, uninstrumentedCheckout } from "./base-build.js";
import { medianRoundRatio, roundRatios } from "./interleave.js";
import { exportKeys, makeKeys, signToken } from "./keys.js";
import {
  type LoadResult,
  PreparedRequests,
  runLoad,
  type ServerProcess,
  startServerProcess,
} from "./load.js";
import { VERIFY_CASES, type VerifySamples } from "./observability-verify.js";
import { BENCH_PATH } from "./ours.js";
import { ROOT } from "./report.js";
import { median, sig } from "./stats.js";
import type { GroupResult, Table, Target } from "./types.js";
import { referenceServerEnv, signedDeliveries } from "./webhook.js";

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
const MIGRATE_SCOPE = "config:write";

/**
 * Many short rounds (each variant about 10 ms of CPU a round) rather than a few long ones: load from elsewhere
 * changes within a second, and only what stays put across one round cancels out of its ratio. In several processes,
 * each with its own placement of each module's code.
 */
const VERIFY_ROUNDS = 101;
const VERIFY_PROCESSES = 6;
/**
 * HTTP rows: fresh server processes this many times, each for HTTP_ROUNDS_PER_GENERATION interleaved rounds. One
 * process can run several percent fast or slow for its whole life (where V8 placed and inlined its code, its
 * heap's sizing), which no interleaving inside it cancels; many processes per variant make that part of the spread.
 */
const HTTP_GENERATIONS = 10;
const HTTP_ROUNDS_PER_GENERATION = 2;

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

/** `authenticateNow` of each build on one token, interleaved round by round, in VERIFY_PROCESSES processes. */
function verifyComparisons(baseDir: string, quick: boolean): Comparison[] {
  const script = join(ROOT, "bench", "src", "observability-verify.ts");
  const rounds = quick ? 21 : VERIFY_ROUNDS;
  return VERIFY_CASES.map((c, index) => {
    const all: VerifySamples = { base: [], copy: [], measured: [] };
    const processes = quick ? 1 : VERIFY_PROCESSES;
    for (let p = 0; p < processes; p++) {
      console.log(`observability: ${c.label}, process ${p + 1}/${processes}`);
      const out = execFileSync(
        process.execPath,
        ["--import", "tsx", script, baseDir, String(index), String(rounds)],
        { cwd: join(ROOT, "bench"), encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
      );
      const samples = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as VerifySamples;
      all.base.push(...samples.base);
      all.copy.push(...samples.copy);
      all.measured.push(...samples.measured);
    }
    return {
      row: c.label,
      metric: "CPU µs/op",
      ratio: medianRoundRatio(all.measured, all.base),
      control: medianRoundRatio(all.copy, all.base),
      measured: median(all.measured),
      base: median(all.base),
      rounds: { measured: all.measured, base: all.base },
    };
  });
}

/** The load of one row on one variant's server, for a round of `seconds` (warm-up included). */
type RowLoad = (name: string, server: ServerProcess, seconds: number) => Parameters<typeof runLoad>[0];

interface HttpSchedule {
  /** Fresh server processes per variant, one set after another: a process's own JIT and heap luck stays in one. */
  generations: number;
  /** Interleaved rounds of each row per generation, the order of the variants turned each round. */
  rounds: number;
  durationSeconds: number;
  /** Before each generation's first round of a row, on each variant. */
  warmupSeconds: number;
}

/**
 * Rows of load on server processes, interleaved: each generation starts a fresh process per variant, runs every
 * row's rounds on them (the variants' order turned each round), and stops them. Server CPU µs per 2xx answer per
 * round, by row and variant.
 */
async function interleavedLoad(
  label: string,
  start: () => Promise<Map<string, ServerProcess>>,
  rows: ReadonlyMap<string, RowLoad>,
  s: HttpSchedule,
): Promise<Map<string, Map<string, LoadResult[]>>> {
  const results = new Map<string, Map<string, LoadResult[]>>();
  let turn = 0;
  for (let generation = 0; generation < s.generations; generation++) {
    const servers = await start();
    try {
      const names = [...servers.keys()];
      for (const [row, load] of rows) {
        const byName = results.get(row) ?? new Map(names.map((name) => [name, [] as LoadResult[]]));
        results.set(row, byName);
        for (let round = 0; round < s.rounds; round++, turn++) {
          for (let i = 0; i < names.length; i++) {
            const name = names[(i + turn) % names.length] as string;
            console.log(
              `observability: ${label}, ${row}: generation ${generation + 1}/${s.generations} round ${round + 1}/${s.rounds} ${name}`,
            );
            const warmupSeconds = round === 0 ? s.warmupSeconds : 0;
            const result = await runLoad({
              ...load(name, servers.get(name) as ServerProcess, s.durationSeconds + warmupSeconds),
              durationSeconds: s.durationSeconds,
              warmupSeconds,
            });
            byName.get(name)?.push(result);
          }
        }
      }
    } finally {
      await Promise.all([...servers.values()].map((server) => server.stop()));
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
  s: HttpSchedule,
): Promise<{ comparison: Comparison; invalid: string[] }> {
  const keys = makeKeys("HS256");
  const env = { BENCH_KEYS: JSON.stringify(exportKeys(keys)) };
  const script = (dir: string) => join(dir, "bench", "src", "servers", "http-server.ts");
  const headers = { authorization: `Bearer ${signToken(keys)}` };
  const row = `Hono + ours, same token (HS256, ${HONO_CONNECTIONS} connections)`;
  const results = await interleavedLoad(
    "Hono + ours",
    async () =>
      new Map([
        ["base", await startServerProcess(script(baseDir), ["hono-ours", "base"], env)],
        ["measured", await startServerProcess(script(ROOT), ["hono-ours", "measured"], env)],
      ]),
    new Map<string, RowLoad>([
      [
        row,
        (_name, server) => ({
          url: `http://127.0.0.1:${server.port}${BENCH_PATH}`,
          connections: HONO_CONNECTIONS,
          headers,
          serverPid: server.pid,
          durationSeconds: 0,
          warmupSeconds: 0,
        }),
      ],
    ]),
    s,
  );
  const byName = results.get(row) ?? new Map();
  return { comparison: loadComparison(row, byName, "measured", "base"), invalid: invalidRounds(byName) };
}

/**
 * The reference server's signed webhook acknowledgement (worker held back) and an authenticated GET, each build on a
 * database of its own, each in its own process: instrumentation off, the build without it against this build;
 * metrics on, this build with METRICS_PORT set against it without.
 */
async function webhookComparisons(
  baseDir: string,
  databaseUrl: string,
  s: HttpSchedule,
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
  const migrator = { authorization: `Bearer ${signToken(keys, { scopes: [MIGRATE_SCOPE] })}` };
  const databases: TestDatabase[] = [];
  const dataDirs: string[] = [];
  const environment = async (extra: Record<string, string>) => {
    const database = await createTestDatabase("bench_observability", databaseUrl);
    databases.push(database);
    const dataDir = mkdtempSync(join(tmpdir(), "bench-observability-"));
    dataDirs.push(dataDir);
    return referenceServerEnv(database.url, dataDir, appSecret, { ...held, ...extra });
  };
  // Each database migrated once: the GET reads a history that exists, rather than timing the error of a missing
  // one (an exception with a source-mapped stack per request, a cost of its own that varies).
  const migrated = new Set<string>();
  const migrate = async (servers: Map<string, ServerProcess>) => {
    for (const [name, server] of servers) {
      if (migrated.has(name)) continue;
      const response = await fetch(`http://127.0.0.1:${server.port}/databases/default/migrate`, {
        method: "POST",
        headers: migrator,
      });
      if (!response.ok)
        throw new Error(`${name}: migrate answered ${response.status}: ${await response.text()}`);
      migrated.add(name);
    }
    return servers;
  };
  const signed = signedDeliveries("observability", appSecret);
  const webhookRow = `POST /whatsapp/webhook (${WEBHOOK_CONNECTIONS} connections)`;
  const getRow = `reference server GET ${MIGRATIONS_PATH} with a JWT (${HONO_CONNECTIONS} connections)`;
  const rows = new Map<string, RowLoad>([
    [
      webhookRow,
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
    ],
    [
      getRow,
      (_name, server) => ({
        url: `http://127.0.0.1:${server.port}${MIGRATIONS_PATH}`,
        connections: HONO_CONNECTIONS,
        headers: bearer,
        serverPid: server.pid,
        durationSeconds: 0,
        warmupSeconds: 0,
      }),
    ],
  ]);
  try {
    const baseEnv = await environment({});
    const measuredEnv = await environment({});
    const metricsEnv = await environment({ METRICS_PORT: "0" });
    const off = await interleavedLoad(
      "reference server, instrumentation off",
      async () =>
        migrate(
          new Map([
            ["base", await startServerProcess(script(baseDir), [], baseEnv)],
            ["measured", await startServerProcess(script(ROOT), [], measuredEnv)],
          ]),
        ),
      rows,
      s,
    );
    const metrics = await interleavedLoad(
      "reference server, METRICS_PORT",
      async () =>
        migrate(
          new Map([
            ["measured", await startServerProcess(script(ROOT), [], measuredEnv)],
            ["measured, METRICS_PORT set", await startServerProcess(script(ROOT), [], metricsEnv)],
          ]),
        ),
      rows,
      s,
    );
    const offRows = [...off.entries()];
    const metricsRows = [...metrics.entries()];
    return {
      off: offRows.map(([row, r]) => loadComparison(row, r, "measured", "base")),
      metrics: metricsRows.map(([row, r]) =>
        loadComparison(`${row}, METRICS_PORT set`, r, "measured, METRICS_PORT set", "measured"),
      ),
      invalid: [...offRows, ...metricsRows].flatMap(([, r]) => invalidRounds(r)),
    };
  } finally {
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
  const http: HttpSchedule = {
    generations: options.quick ? 1 : HTTP_GENERATIONS,
    rounds: options.quick ? 2 : HTTP_ROUNDS_PER_GENERATION,
    durationSeconds: options.quick ? 1 : 1.5,
    warmupSeconds: options.quick ? 0 : 1,
  };
  const verify = verifyComparisons(baseDir, options.quick);
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
      webhook?.metrics.includes(c) ? "METRICS_PORT set vs unset" : "this build vs without instrumentation",
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
      `The base is the same commit (\`${commit.slice(0, 12)}\`) built without its instrumentation code path: a \`git worktree\` of it, installed from the pnpm store and built with the statements labelled \`${INSTRUMENTATION_LABEL}:\` (the tracer checks and spans) dropped by esbuild (\`bench/src/base-build.ts\`; \`BENCH_BASE_DIR\` or \`BENCH_UNINSTRUMENTED_COMMIT\` choose another). Off means no \`onDecision\` (the reference server always has one: it logs refusals), no OpenTelemetry SDK registered, no \`METRICS_PORT\`.`,
      `Verification: \`authenticateNow\` of each build's jwt-rbac (authorization on, one scope on the route) on one token, in ${options.quick ? 1 : VERIFY_PROCESSES} processes of ${options.quick ? 21 : VERIFY_ROUNDS} interleaved rounds of about 10 ms of CPU per variant (\`bench/src/observability-verify.ts\`), the order turned each round; the A/A control is a second instance of the base build's module, measured in the same rounds, and shows how far two copies of the same code drift apart here.`,
      `HTTP: each build's own bench server script in a process of its own (\`hono-ours\` as the http group serves it; the reference server with its worker held back, each build on a database of its own, migrated). ${http.generations} generations of fresh processes, each measured in ${http.rounds} interleaved rounds of ${http.durationSeconds} s per row (the first after ${http.warmupSeconds} s of warm-up), the order turned each round: a process can run several percent fast or slow for its whole life, so the rounds come from many processes. (Both builds' servers in one process were tried and scattered more.) Server CPU per 2xx answer from /proc.`,
      "Every ratio is the median over rounds of (measured ÷ base) within the same round, so load from elsewhere on the shared machine, which moves both sides of a round alike, cancels out.",
    ],
    tables: [table],
    charts: [],
    targets,
    figures: { baseCommit: commit, comparisons: rows },
  };
}
