/**
 * A flood at a fixed rate with a probe beside it: `flood(i)` is started `floodPerSecond` times a second
 * (in ticks of `tickMs`, never waiting for earlier ones), `probe()` every `probeEveryMs`, both for
 * `durationMs`; then everything started is awaited. Each call answers a label (an HTTP status, "ok", a
 * reason): the counts of each label come back with the process's memory before and after.
 */
export interface FloodOptions {
  readonly durationMs: number;
  readonly floodPerSecond: number;
  readonly flood: (index: number) => Promise<string | number>;
  readonly probeEveryMs: number;
  readonly probe: (index: number) => Promise<string | number>;
  /** Default 50. */
  readonly tickMs?: number;
}

export interface FloodResult {
  /** Every probe's label, in order. */
  readonly probes: (string | number)[];
  /** How many flood calls answered each label. */
  readonly flooded: Map<string | number, number>;
  readonly floodCalls: number;
  /** Wall time from the first call to the last answer. */
  readonly elapsedMs: number;
  /** Retained memory (after a full collection) before the first call and after the last answer, in bytes. */
  readonly memory: {
    readonly before: { heapUsed: number; rss: number };
    readonly after: { heapUsed: number; rss: number };
  };
}

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;
/**
 * A full garbage collection, so `heapUsed` measures what is retained rather than what is not collected yet
 * (`--expose-gc` set at run time: a fresh context then sees `gc`).
 */
export function collectGarbage(): void {
  if (gc === undefined) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
}

/** `process.memoryUsage()` after a full collection: what is retained. */
export function retainedMemory(): { heapUsed: number; rss: number } {
  collectGarbage();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
}

const sleepUntil = (at: number) =>
  new Promise<void>((done) => setTimeout(done, Math.max(0, at - performance.now())));

export async function runFlood(options: FloodOptions): Promise<FloodResult> {
  const tickMs = options.tickMs ?? 50;
  const perTick = (options.floodPerSecond * tickMs) / 1000;
  const before = retainedMemory();
  const started = performance.now();
  const end = started + options.durationMs;
  const flooded = new Map<string | number, number>();
  const pending: Promise<unknown>[] = [];
  let floodCalls = 0;
  const floodLoop = async () => {
    let owed = 0;
    for (let tick = 0; started + tick * tickMs < end; tick++) {
      await sleepUntil(started + tick * tickMs);
      owed += perTick;
      for (; owed >= 1; owed--) {
        const index = floodCalls++;
        pending.push(
          options.flood(index).then(
            (label) => flooded.set(label, (flooded.get(label) ?? 0) + 1),
            (error: unknown) =>
              flooded.set(`threw ${String(error)}`, (flooded.get(`threw ${String(error)}`) ?? 0) + 1),
          ),
        );
      }
    }
  };
  const probes: (string | number)[] = [];
  const probeLoop = async () => {
    for (let i = 0; started + i * options.probeEveryMs < end; i++) {
      await sleepUntil(started + i * options.probeEveryMs);
      const index = i;
      pending.push(
        options.probe(index).then(
          (label) => {
            probes[index] = label;
          },
          (error: unknown) => {
            probes[index] = `threw ${String(error)}`;
          },
        ),
      );
    }
  };
  await Promise.all([floodLoop(), probeLoop()]);
  await Promise.all(pending);
  return {
    probes,
    flooded,
    floodCalls,
    elapsedMs: performance.now() - started,
    memory: { before, after: retainedMemory() },
  };
}
