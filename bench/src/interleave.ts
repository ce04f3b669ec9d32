import { median } from "./stats.js";

/**
 * Synchronous variants measured in rounds on one thread: every round runs each variant for `ops` calls (the order
 * turned each round), so a burst of load from elsewhere on a shared machine hits every variant alike. Returns the
 * CPU µs per call of each variant in each round, in round order.
 */
export function interleavedCpuRounds(
  variants: readonly (readonly [string, () => unknown])[],
  options: { rounds: number; ops: number; warmupOps?: number },
): Map<string, number[]> {
  const samples = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (const [, run] of variants) for (let i = 0; i < (options.warmupOps ?? 20_000); i++) run();
  for (let round = 0; round < options.rounds; round++) {
    for (let i = 0; i < variants.length; i++) {
      const [name, run] = variants[(i + round) % variants.length] as readonly [string, () => unknown];
      const start = process.cpuUsage();
      for (let op = 0; op < options.ops; op++) run();
      const cpu = process.cpuUsage(start);
      samples.get(name)?.push((cpu.user + cpu.system) / options.ops);
    }
  }
  return samples;
}

/**
 * The median over rounds of `measured[i] / base[i]`: two variants measured in the same rounds are compared round by
 * round, so the machine's load, which moves both alike within a round, cancels out of each ratio.
 */
export function medianRoundRatio(measured: readonly number[], base: readonly number[]): number {
  return median(roundRatios(measured, base));
}

/** `measured[i] / base[i]` for every round where both were measured, sorted. */
export function roundRatios(measured: readonly number[], base: readonly number[]): number[] {
  return measured
    .flatMap((value, i) => {
      const b = base[i];
      return b === undefined || !(b > 0) || !Number.isFinite(value) ? [] : [value / b];
    })
    .sort((a, b) => a - b);
}
