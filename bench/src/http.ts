import { join } from "node:path";
import { type Alg, exportKeys, makeKeys, signToken, signTokens } from "./keys.js";
import { type LoadResult, runLoad, ServerUnavailableError, startServerProcess } from "./load.js";
import { BENCH_PATH, resolvedEntry } from "./ours.js";
import type { HttpVariant } from "./servers/http-server.js";
import { median, sig } from "./stats.js";
import type { BarKind, GroupResult, Table, Target } from "./types.js";

const HTTP_ALGORITHMS = ["HS256", "RS256"] as const satisfies readonly Alg[];
type HttpAlg = (typeof HTTP_ALGORITHMS)[number];
const SERVER_SCRIPT = join(import.meta.dirname, "servers", "http-server.ts");
const CONNECTIONS = 10;
/** The same-token rows are measured at both loads: an independent run used 10, an earlier bench 100. */
const HIGH_CONNECTIONS = 100;
const AT_BOTH_LOADS: readonly CaseId[] = ["honoBare", "honoHeader", "honoOurs"];

type CaseId =
  | "honoBare"
  | "honoNoop"
  | "honoHeader"
  | "honoOurs"
  | "honoOursFresh"
  | "honoMinimal"
  | "honoJwt"
  | "expressBare"
  | "expressOurs"
  | "expressJwt";

interface Case {
  id: CaseId;
  label: string;
  variant: HttpVariant;
  kind: BarKind;
  /** same: one token on every request; fresh: a rotation of distinct tokens, each request the next one. */
  tokens: "same" | "fresh";
  /** The case this one is a ratio of (the bare route of the same framework). */
  bare: CaseId;
}

const CASES: Case[] = [
  {
    id: "honoBare",
    label: "Hono, bare route",
    variant: "hono-bare",
    kind: "floor",
    tokens: "same",
    bare: "honoBare",
  },
  {
    id: "honoNoop",
    label: "Hono + empty async middleware",
    variant: "hono-noop",
    kind: "floor",
    tokens: "same",
    bare: "honoBare",
  },
  {
    id: "honoHeader",
    label: "Hono + middleware reading one header",
    variant: "hono-header",
    kind: "floor",
    tokens: "same",
    bare: "honoBare",
  },
  {
    id: "honoOurs",
    label: "Hono + ours, same token",
    variant: "hono-ours",
    kind: "ours",
    tokens: "same",
    bare: "honoBare",
  },
  {
    id: "honoOursFresh",
    label: "Hono + ours, fresh token per request",
    variant: "hono-ours",
    kind: "ours",
    tokens: "fresh",
    bare: "honoBare",
  },
  {
    id: "honoMinimal",
    label: "Hono + minimal node:crypto verifier",
    variant: "hono-minimal",
    kind: "peer",
    tokens: "fresh",
    bare: "honoBare",
  },
  {
    id: "honoJwt",
    label: "Hono + hono/jwt + scope check",
    variant: "hono-jwt",
    kind: "peer",
    tokens: "same",
    bare: "honoBare",
  },
  {
    id: "expressBare",
    label: "Express, bare route",
    variant: "express-bare",
    kind: "floor",
    tokens: "same",
    bare: "expressBare",
  },
  {
    id: "expressOurs",
    label: "Express + ours, same token",
    variant: "express-ours",
    kind: "ours",
    tokens: "same",
    bare: "expressBare",
  },
  {
    id: "expressJwt",
    label: "Express + express-jwt + scope check",
    variant: "express-jwt",
    kind: "peer",
    tokens: "same",
    bare: "expressBare",
  },
];

type Outcome = { result: LoadResult; rounds: LoadResult[] } | { skipped: string };
type AlgResults = Partial<Record<CaseId, Outcome>> & {
  /** The AT_BOTH_LOADS cases again at HIGH_CONNECTIONS. */
  high?: Partial<Record<CaseId, Outcome>>;
};

interface Settings {
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  freshTokens: number;
}

type Server = Awaited<ReturnType<typeof startServerProcess>>;

/** Median of every figure over the rounds. */
function medianResult(rounds: LoadResult[]): LoadResult {
  const m = (pick: (r: LoadResult) => number | null) => {
    const values = rounds.map(pick).filter((v): v is number => v !== null);
    return values.length === 0 ? null : median(values);
  };
  return {
    requestsPerSecond: m((r) => r.requestsPerSecond) ?? 0,
    latencyP50Ms: m((r) => r.latencyP50Ms) ?? 0,
    latencyP99Ms: m((r) => r.latencyP99Ms) ?? 0,
    requests: rounds.reduce((sum, r) => sum + r.requests, 0),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    serverCpuUsPerRequest: m((r) => r.serverCpuUsPerRequest),
    loadGeneratorCpuUsPerRequest: m((r) => r.loadGeneratorCpuUsPerRequest),
    databaseCpuUsPerRequest: m((r) => r.databaseCpuUsPerRequest),
    serverGcPauseUsPerRequest: m((r) => r.serverGcPauseUsPerRequest),
    serverPromotedBytesPerRequest: m((r) => r.serverPromotedBytesPerRequest),
  };
}

/**
 * All servers of one algorithm are started up front; then every round runs each case once, rotating the order, so
 * a burst of load from elsewhere on a shared machine hits every case alike. Figures are medians over rounds.
 */
async function runAlg(alg: HttpAlg, s: Settings): Promise<AlgResults> {
  const keys = makeKeys(alg);
  const env = { BENCH_KEYS: JSON.stringify(exportKeys(keys)) };
  const same = signToken(keys);
  const fresh = await signTokens(keys, s.freshTokens);
  const results: AlgResults = {};
  const servers = new Map<CaseId, Server>();
  try {
    // Started together (startup is mostly module loading); they sit idle until their turn. allSettled, so a
    // failure still leaves every started server in `servers` for the finally below to stop.
    const started = await Promise.allSettled(
      CASES.map((c) => startServerProcess(SERVER_SCRIPT, [c.variant, c.id], env)),
    );
    let failure: unknown;
    for (const [i, outcome] of started.entries()) {
      const c = CASES[i] as Case;
      if (outcome.status === "fulfilled") servers.set(c.id, outcome.value);
      else if (outcome.reason instanceof ServerUnavailableError)
        results[c.id] = { skipped: outcome.reason.message };
      else failure = outcome.reason;
    }
    if (failure !== undefined) throw failure;
    const live = CASES.filter((c) => servers.has(c.id));
    const high = live.filter((c) => AT_BOTH_LOADS.includes(c.id));
    const measure = async (cases: Case[], connections: number) => {
      const rounds = new Map<CaseId, LoadResult[]>(cases.map((c) => [c.id, []]));
      for (let round = 0; round < s.rounds; round++) {
        for (let i = 0; i < cases.length; i++) {
          const c = cases[(i + round) % cases.length] as Case;
          const server = servers.get(c.id) as Server;
          console.log(`http: ${alg} ${connections} connections, round ${round + 1}/${s.rounds} ${c.label}`);
          let next = 0;
          rounds.get(c.id)?.push(
            await runLoad({
              url: `http://127.0.0.1:${server.port}${BENCH_PATH}`,
              connections,
              durationSeconds: s.durationSeconds,
              warmupSeconds: round === 0 ? s.warmupSeconds : 0,
              serverPid: server.pid,
              serverGc: server.gc,
              headers: { authorization: `Bearer ${same}` },
              ...(c.tokens === "fresh"
                ? {
                    perRequest: () => {
                      next = (next + 1) % fresh.length;
                      return { headers: { authorization: `Bearer ${fresh[next]}` } };
                    },
                  }
                : {}),
            }),
          );
        }
      }
      const outcomes: Partial<Record<CaseId, Outcome>> = {};
      for (const c of cases) {
        const all = rounds.get(c.id) ?? [];
        const result = medianResult(all);
        outcomes[c.id] =
          result.non2xx > 0 || result.errors > 0
            ? { skipped: `invalid run: ${result.non2xx} non-2xx answers, ${result.errors} connection errors` }
            : { result, rounds: all };
      }
      return outcomes;
    };
    Object.assign(results, await measure(live, CONNECTIONS));
    results.high = await measure(high, HIGH_CONNECTIONS);
    return results;
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
  }
}

function get(results: Partial<Record<CaseId, Outcome>>, id: CaseId): LoadResult | undefined {
  const o = results[id];
  return o && "result" in o ? o.result : undefined;
}

function rpsRatio(
  results: AlgResults | Partial<Record<CaseId, Outcome>>,
  a: CaseId,
  b: CaseId,
): number | undefined {
  const x = get(results, a);
  const y = get(results, b);
  return x && y ? x.requestsPerSecond / y.requestsPerSecond : undefined;
}

const fmt = (r: number | undefined) => (r === undefined ? "n/a" : `${r.toFixed(2)}x`);

export async function runHttpGroup(options: { quick: boolean }): Promise<GroupResult> {
  const s: Settings = options.quick
    ? { rounds: 1, durationSeconds: 1, warmupSeconds: 0, freshTokens: 500 }
    : { rounds: 3, durationSeconds: 1.5, warmupSeconds: 0.5, freshTokens: 5_000 };
  const results = {} as Record<HttpAlg, AlgResults>;
  for (const alg of HTTP_ALGORITHMS) results[alg] = await runAlg(alg, s);
  const tables: Table[] = HTTP_ALGORITHMS.map((alg) => {
    const r = results[alg];
    const notes: string[] = [];
    const rows = CASES.map((c) => {
      const o = r[c.id];
      if (!o || "skipped" in o) {
        notes.push(`${c.label}: ${o ? o.skipped : "not run"}`);
        return [c.label, "n/a", "", "", "", "", "", "", ""];
      }
      const bare = get(r, c.bare);
      const res = o.result;
      return [
        c.label,
        sig(res.requestsPerSecond),
        fmt(bare ? res.requestsPerSecond / bare.requestsPerSecond : undefined),
        res.latencyP50Ms.toString(),
        res.latencyP99Ms.toString(),
        res.serverCpuUsPerRequest === null ? "n/a" : sig(res.serverCpuUsPerRequest),
        fmt(
          bare?.serverCpuUsPerRequest && res.serverCpuUsPerRequest !== null
            ? res.serverCpuUsPerRequest / bare.serverCpuUsPerRequest
            : undefined,
        ),
        res.serverGcPauseUsPerRequest === null ? "n/a" : sig(res.serverGcPauseUsPerRequest),
        res.serverPromotedBytesPerRequest === null ? "n/a" : sig(res.serverPromotedBytesPerRequest),
      ];
    });
    return {
      title: `${alg}: requests per second, ${CONNECTIONS} connections, median of ${s.rounds} × ${s.durationSeconds} s`,
      columns: [
        "server",
        "req/s",
        "× bare",
        "p50 ms",
        "p99 ms",
        "server CPU µs/req",
        "CPU × bare",
        "GC pause µs/req",
        "promoted B/req",
      ],
      rows,
      notes,
    };
  });
  const ratios: [string, CaseId, CaseId][] = [
    ["Hono + empty async middleware ÷ bare Hono", "honoNoop", "honoBare"],
    ["Hono + middleware reading one header ÷ bare Hono", "honoHeader", "honoBare"],
    ["Hono + ours (same token) ÷ bare Hono", "honoOurs", "honoBare"],
    ["Hono + ours (same token) ÷ Hono + middleware reading one header", "honoOurs", "honoHeader"],
    ["Hono + ours (fresh tokens) ÷ bare Hono", "honoOursFresh", "honoBare"],
    ["Hono + minimal verifier ÷ bare Hono", "honoMinimal", "honoBare"],
    ["Hono + ours (fresh) ÷ Hono + minimal verifier", "honoOursFresh", "honoMinimal"],
    ["Hono + ours (same token) ÷ Hono + hono/jwt", "honoOurs", "honoJwt"],
    ["Hono + hono/jwt ÷ bare Hono", "honoJwt", "honoBare"],
    ["Express + ours ÷ bare Express", "expressOurs", "expressBare"],
    ["Express + express-jwt ÷ bare Express", "expressJwt", "expressBare"],
    ["Express + ours ÷ Express + express-jwt", "expressOurs", "expressJwt"],
  ];
  tables.push({
    title: "Ratios (requests per second)",
    columns: ["ratio", ...HTTP_ALGORITHMS],
    rows: ratios.map(([label, a, b]) => [
      label,
      ...HTTP_ALGORITHMS.map((alg) => fmt(rpsRatio(results[alg], a, b))),
    ]),
  });
  const loads = [
    [CONNECTIONS, (alg: HttpAlg) => results[alg]],
    [HIGH_CONNECTIONS, (alg: HttpAlg) => results[alg].high ?? {}],
  ] as const;
  tables.push({
    title: `Same token at ${CONNECTIONS} and ${HIGH_CONNECTIONS} connections: req/s × bare Hono, server CPU µs/req`,
    columns: ["server", ...loads.flatMap(([n]) => HTTP_ALGORITHMS.map((alg) => `${alg}, ${n} conn.`))],
    rows: AT_BOTH_LOADS.map((id) => [
      (CASES.find((c) => c.id === id) as Case).label,
      ...loads.flatMap(([, of]) =>
        HTTP_ALGORITHMS.map((alg) => {
          const res = get(of(alg), id);
          const cpu = res?.serverCpuUsPerRequest;
          return res === undefined
            ? "n/a"
            : `${fmt(rpsRatio(of(alg), id, "honoBare"))}, ${cpu === null || cpu === undefined ? "n/a" : sig(cpu)} µs`;
        }),
      ),
    ]),
  });
  const targets: Target[] = [];
  for (const alg of HTTP_ALGORITHMS) {
    // The target: within 3% of a middleware that only reads the Authorization header, which is @hono/node-server's
    // own cost for any middleware that reads a header; at both loads.
    for (const [connections, of] of loads) {
      const same = rpsRatio(of(alg), "honoOurs", "honoBare");
      const header = rpsRatio(of(alg), "honoHeader", "honoBare");
      targets.push({
        name: `Hono + ours, same token, ${alg}, ${connections} connections`,
        goal: "≥ 0.97x the req/s of Hono + a middleware reading one header",
        measured:
          same === undefined || header === undefined
            ? "not measured"
            : `${same.toFixed(2)}x vs ${header.toFixed(2)}x of bare Hono → ${(same / header).toFixed(2)}`,
        met: same === undefined || header === undefined ? null : same >= 0.97 * header,
      });
    }
    const r = results[alg];
    const fresh = rpsRatio(r, "honoOursFresh", "honoBare");
    const minimal = rpsRatio(r, "honoMinimal", "honoBare");
    targets.push({
      name: `Hono + ours, fresh token per request, ${alg}`,
      goal: "ratio to bare ≥ 0.9 × the minimal node:crypto verifier's ratio",
      measured:
        fresh === undefined || minimal === undefined
          ? "not measured"
          : `${fresh.toFixed(2)}x vs minimal ${minimal.toFixed(2)}x → ${(fresh / minimal).toFixed(2)}`,
      met: fresh === undefined || minimal === undefined ? null : fresh >= 0.9 * minimal,
    });
    const express = rpsRatio(r, "expressOurs", "expressJwt");
    targets.push({
      name: `Express + ours vs Express + express-jwt, ${alg}`,
      goal: "≥ 1.0x express-jwt req/s",
      measured: express === undefined ? "not measured" : `${express.toFixed(2)}x`,
      met: express === undefined ? null : express >= 1,
    });
  }
  return {
    id: "http",
    title: "2. HTTP middleware, requests per second",
    method: [
      `Each server variant runs in its own child process (\`bench/src/servers/http-server.ts\`, port 0), the load generator (autocannon, programmatic) in the bench process: ${CONNECTIONS} connections, loopback only; the same-token Hono rows (bare, header-reading, ours) again at ${HIGH_CONNECTIONS} connections, the same rounds after the others. All servers of an algorithm run at once; each gets a ${s.warmupSeconds} s discarded warm-up, then ${s.rounds} rounds each run every case for ${s.durationSeconds} s in rotating order; figures are medians over rounds. Every route is GET ${BENCH_PATH} → 200 \`{"ok":true}\`; a run with any non-2xx answer is reported invalid, not counted.`,
      `Ours: the package's Hono / Express adapter (\`${resolvedEntry("@agent-platform/jwt-rbac/hono")}\`, \`${resolvedEntry("@agent-platform/jwt-rbac/express")}\`), \`jwtRbac({ verificationKeys: [key], algorithm, authorization: true, scopeMappings: { 'GET /bench': ['bench:read'] } })\`, default cache.`,
      `Same token: one token on every request (a cache hit after the first). Fresh token: a rotation of ${s.freshTokens.toLocaleString("en-US")} distinct pre-signed tokens, the next one on every request (autocannon \`setupRequest\`) — five times the default cache of 1,000 entries, so every request misses.`,
      "Two reference rows show what any Hono middleware costs on @hono/node-server: an empty `async (c, next) => { await next() }`, and one that only reads the Authorization header (`c.req.header()` makes node-server's lightweight request build a WHATWG Headers object).",
      "Minimal node:crypto verifier: header pinned, one-shot signature check with a KeyObject, payload parsed, `exp` and the scope checked — the least a careful hand-written middleware does. hono/jwt: the secret string for HS256, a CryptoKey imported once for RS256, plus a scope check. express-jwt: given a KeyObject made once (jsonwebtoken underneath), plus a hand-written scope check.",
      "Server CPU µs/req: the server process's user+system time over the measured run (/proc) ÷ 2xx answers — independent of whether the load generator or the server saturates first on 2 cores.",
      "GC pause µs/req and promoted B/req: the server's main-thread garbage-collection pause and the bytes it promoted to the old generation over the measured run, from V8's `--trace-gc-nvp` lines (every bench server runs with it), ÷ 2xx answers. A middleware that keeps each request's objects alive past a young-generation collection shows here first.",
    ],
    tables,
    charts: [
      {
        title: "HTTP requests per second, × the bare route of the same framework",
        unit: "req/s ÷ bare route",
        higherIsBetter: true,
        reference: 1,
        sections: HTTP_ALGORITHMS.map((alg) => ({
          name: alg,
          bars: CASES.map((c) => {
            const value = rpsRatio(results[alg], c.id, c.bare);
            return value === undefined
              ? { label: c.label, kind: c.kind, value: null, note: "not measured (see table)" }
              : { label: c.label, kind: c.kind, value };
          }),
        })),
      },
    ],
    targets,
    figures: results,
  };
}
