// How long `pnpm start` takes until `/health` answers, as a user sees it: from spawning the command at the
// repository root to the first 200 of `GET /health`, polled every 20 ms. Each round starts on a fresh data
// directory (PGlite's initdb, the key generation) and then once more on the same, now existing, one. Prints
// every figure, min and median of each kind, and the load average before and after: on a shared machine the
// load moves the wall-clock figure more than anything in the code, so the CPU time the command's processes
// (pnpm and the server) had used by then is printed too (Linux, from /proc).
//
//   pnpm --filter @agent-platform/server measure:start [rounds]   (default 5)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pnpmStart } from "../test/pnpm-start.js";

const rounds = Number(process.argv[2] ?? 5);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) {
  process.stderr.write("usage: measure-start [rounds: 1..50]\n");
  process.exit(1);
}

const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
/** CPU time (user + system, ms) used so far by `pid` and every live process below it. */
function treeCpuMs(pid: number): number {
  const stats = new Map<number, { parent: number; ticks: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the parenthesised command name: state, ppid, …, utime (14th field), stime (15th).
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      stats.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The process ended while the table was read.
    }
  }
  const inTree = (candidate: number): boolean => {
    for (let current = candidate; current > 1; current = stats.get(current)?.parent ?? 0) {
      if (current === pid) return true;
    }
    return false;
  };
  let ticks = 0;
  for (const [candidate, { ticks: own }] of stats) if (inTree(candidate)) ticks += own;
  // Clock ticks are 1/100 s on Linux.
  return ticks * 10;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : Math.round(((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2);
};

const before = loadavg();
const figures = { "fresh data dir": [] as number[], "existing data dir": [] as number[] };
const cpu = { "fresh data dir": [] as number[], "existing data dir": [] as number[] };
for (let round = 1; round <= rounds; round++) {
  const dataDir = mkdtempSync(join(tmpdir(), "measure-start-"));
  try {
    for (const [kind, list] of Object.entries(figures)) {
      const start = await pnpmStart(dataDir);
      const ms = await start.ready;
      const cpuMs = treeCpuMs(start.pid);
      const status = await start.interrupt();
      list.push(ms);
      cpu[kind as keyof typeof cpu].push(cpuMs);
      process.stdout.write(
        `round ${round}, ${kind}: ${ms} ms (${cpuMs} ms CPU); exit ${status} on Ctrl-C (load ${loadavg()})\n`,
      );
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
process.stdout.write("\n");
for (const [kind, list] of Object.entries(figures)) {
  const cpuList = cpu[kind as keyof typeof cpu];
  process.stdout.write(
    `${kind}: min ${Math.min(...list)} ms, median ${median(list)} ms; CPU min ${Math.min(...cpuList)} ms, median ${median(cpuList)} ms\n`,
  );
}
process.stdout.write(`load average (1, 5, 15 min): ${before} before, ${loadavg()} after; ${rounds} rounds\n`);
