// How long `pnpm start` takes until `/health` answers, as a user sees it: from spawning the command at the
// repository root to the first 200 of `GET /health`, polled every 20 ms. Each round starts on a fresh data
// directory (PGlite's initdb, the key generation) and then once more on the same, now existing, one. Prints
// every figure, min and median of each kind, and the load average before and after: on a shared machine the
// load moves these figures more than anything in the code.
//
//   pnpm --filter @agent-platform/server measure:start [rounds]   (default 5)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pnpmStart } from "../test/pnpm-start.js";

const rounds = Number(process.argv[2] ?? 5);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) {
  process.stderr.write("usage: measure-start [rounds: 1..50]\n");
  process.exit(1);
}

const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : Math.round(((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2);
};

const before = loadavg();
const figures = { "fresh data dir": [] as number[], "existing data dir": [] as number[] };
for (let round = 1; round <= rounds; round++) {
  const dataDir = mkdtempSync(join(tmpdir(), "measure-start-"));
  try {
    for (const [kind, list] of Object.entries(figures)) {
      const start = await pnpmStart(dataDir);
      const ms = await start.ready;
      const status = await start.interrupt();
      list.push(ms);
      process.stdout.write(
        `round ${round}, ${kind}: ${ms} ms; exit ${status} on Ctrl-C (load ${loadavg()})\n`,
      );
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
process.stdout.write("\n");
for (const [kind, list] of Object.entries(figures)) {
  process.stdout.write(`${kind}: min ${Math.min(...list)} ms, median ${median(list)} ms\n`);
}
process.stdout.write(`load average (1, 5, 15 min): ${before} before, ${loadavg()} after; ${rounds} rounds\n`);
