import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

/** A server under load, in its own process so it never shares a core's event loop with the load generator. */
export interface ServerProcess {
  port: number;
  pid: number;
  /** Its garbage collections so far, from V8's `--trace-gc-nvp` lines (a live total). */
  gc: GcTotals;
  stop(): Promise<void>;
}

/**
 * Garbage collection of a server process: main-thread pause time and bytes promoted to the old generation. Bytes
 * promoted per request are what a request leaves behind for the next full collection; a request object graph that
 * survives young-generation collections shows up here long before it shows in req/s.
 */
export interface GcTotals {
  pauseMs: number;
  promotedBytes: number;
}

/** One `--trace-gc-nvp` line (`pause=1.2 ... promoted=4096 ...`) added to `totals`; other lines are left alone. */
function addGcLine(totals: GcTotals, line: string): void {
  const pause = /(?:^|\s)pause=([\d.]+)/.exec(line);
  if (pause === null) return;
  totals.pauseMs += Number(pause[1]);
  totals.promotedBytes += Number(/\spromoted=(\d+)/.exec(line)?.[1] ?? 0);
}

export class ServerUnavailableError extends Error {
  readonly code = "SERVER_UNAVAILABLE";
}

/**
 * Spawns `node --import tsx <script> ...args` and waits for it to print `LISTENING <port>` (or `UNAVAILABLE <why>`
 * when a package under test has not landed yet).
 */
export function startServerProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<ServerProcess> {
  // BENCH_CPU_PROF_DIR: every server writes a V8 CPU profile there when it exits (see src/profile-top.ts).
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  // One directory per server (named after the script and its arguments): node names each thread's file itself.
  const profiling = profileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, [basename(script, ".ts"), ...args].join("-"))}`]
    : [];
  // --trace-gc-nvp: one line per collection on stdout, summed into `gc` (about a hundred lines a second under load).
  const child = spawn(
    process.execPath,
    [...profiling, "--trace-gc-nvp", "--import", "tsx", script, ...args],
    {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const stderr: string[] = [];
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr.push(chunk.toString());
    if (stderr.length > 50) stderr.shift();
  });
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`${script} did not start in ${timeoutMs} ms: ${stderr.join("")}`)),
      timeoutMs,
    );
    child.once("exit", (code) =>
      fail(new Error(`${script} exited with ${code} before listening: ${stderr.join("").slice(-2000)}`)),
    );
    const gc: GcTotals = { pauseMs: 0, promotedBytes: 0 };
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      addGcLine(gc, line);
      if (line.startsWith("UNAVAILABLE "))
        fail(new ServerUnavailableError(line.slice("UNAVAILABLE ".length)));
      if (!line.startsWith("LISTENING ")) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({
        port: Number(line.slice("LISTENING ".length)),
        pid: child.pid as number,
        gc,
        stop: () => stopChild(child),
      });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

const CLOCK_TICK_US = 10_000; // USER_HZ is 100 on Linux

/** CPU time (user + system) a process has used so far, in µs, from /proc; null where /proc is not available. */
export function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
  } catch {
    return null;
  }
}

/**
 * CPU time of every PostgreSQL process on the machine (postmaster, backends, WAL writer, checkpointer), in µs,
 * from /proc; null where /proc is not available. On a machine that runs nothing else against the database
 * during a measurement, its difference over the measurement is the database's share of the work.
 */
export function postgresCpuUs(): number | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let total = 0;
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres") continue;
    } catch {
      continue; // gone meanwhile
    }
    total += processCpuUs(Number(pid)) ?? 0;
  }
  return total;
}

/**
 * Requests made ahead of a measurement (e.g. signed webhook deliveries), so that the load generator, which shares
 * the machine's two cores with the server and the database, spends its measured time sending rather than
 * signing. Past the prepared ones, `next()` makes them on the fly and counts them in `madeLate`.
 */
export class PreparedRequests<T> {
  private readonly prepared: (T | undefined)[];
  private index = 0;
  madeLate = 0;

  constructor(
    private readonly make: () => T,
    count: number,
  ) {
    this.prepared = Array.from({ length: count }, make);
  }

  next(): T {
    const prepared = this.prepared[this.index];
    if (prepared === undefined) {
      this.madeLate++;
      return this.make();
    }
    this.prepared[this.index++] = undefined; // sent: let it go
    return prepared;
  }
}

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  headers?: Record<string, string>;
  /** Called before every request: the headers (and body) that request carries. */
  perRequest?: () => { headers: Record<string, string>; body?: string | Buffer };
  /** The server's pid, to charge it its CPU time per request. */
  serverPid?: number;
  /** The server's garbage-collection totals (ServerProcess.gc), to charge it its GC per request. */
  serverGc?: GcTotals;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Server process CPU per 2xx response, µs (null without /proc). */
  serverCpuUsPerRequest: number | null;
  /** The bench process's CPU (the load generator's) per 2xx response, µs. */
  loadGeneratorCpuUsPerRequest: number | null;
  /** PostgreSQL's CPU (all its processes) per 2xx response, µs (null without /proc). */
  databaseCpuUsPerRequest: number | null;
  /** The server's main-thread GC pause per 2xx response, µs (null without `serverGc`). */
  serverGcPauseUsPerRequest: number | null;
  /** Bytes the server promoted to its old generation per 2xx response (null without `serverGc`). */
  serverPromotedBytesPerRequest: number | null;
}

function options(load: LoadOptions, durationSeconds: number): autocannon.Options {
  const base: autocannon.Options = {
    url: load.url,
    connections: load.connections,
    duration: durationSeconds,
    method: load.method ?? "GET",
    headers: load.headers ?? {},
  };
  const perRequest = load.perRequest;
  if (!perRequest) return base;
  return {
    ...base,
    requests: [
      {
        setupRequest: (request) => {
          const { headers, body } = perRequest();
          return {
            ...request,
            headers: { ...request.headers, ...headers },
            ...(body === undefined ? {} : { body }),
          };
        },
      },
    ],
  };
}

/** autocannon, programmatic: a discarded warm-up, then the measured run. */
export async function runLoad(load: LoadOptions): Promise<LoadResult> {
  if (load.warmupSeconds > 0) await autocannon(options(load, load.warmupSeconds));
  const cpuBefore = load.serverPid === undefined ? null : processCpuUs(load.serverPid);
  const benchBefore = process.cpuUsage();
  const databaseBefore = postgresCpuUs();
  const gcBefore = load.serverGc === undefined ? undefined : { ...load.serverGc };
  const result = await autocannon(options(load, load.durationSeconds));
  const cpuAfter = load.serverPid === undefined ? null : processCpuUs(load.serverPid);
  const bench = process.cpuUsage(benchBefore);
  const databaseAfter = postgresCpuUs();
  // A collection's line is written when it ends: one that ended with the run may still be in the pipe.
  if (load.serverGc !== undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  const gcAfter = load.serverGc === undefined ? undefined : { ...load.serverGc };
  const ok = result["2xx"];
  const perOk = (us: number | null) => (us === null || ok === 0 ? null : us / ok);
  return {
    requestsPerSecond: ok / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: ok,
    non2xx: result.non2xx,
    errors: result.errors,
    serverCpuUsPerRequest: perOk(cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore),
    loadGeneratorCpuUsPerRequest: perOk(bench.user + bench.system),
    databaseCpuUsPerRequest: perOk(
      databaseBefore === null || databaseAfter === null ? null : databaseAfter - databaseBefore,
    ),
    serverGcPauseUsPerRequest: perOk(
      gcBefore === undefined || gcAfter === undefined ? null : (gcAfter.pauseMs - gcBefore.pauseMs) * 1000,
    ),
    serverPromotedBytesPerRequest: perOk(
      gcBefore === undefined || gcAfter === undefined ? null : gcAfter.promotedBytes - gcBefore.promotedBytes,
    ),
  };
}
