/**
 * One process's share of the observability group's verification rows: `authenticateNow` of the base build, a
 * second instance of it (the A/A control) and this build, on one token, in interleaved rounds. Run as
 *   tsx src/observability-verify.ts <base dir> <case index> <rounds>
 * it prints the CPU µs per call of each variant in each round as one JSON line. The group runs it in several
 * processes: each process places and inlines each module's code its own way, a difference no round inside it
 * cancels.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { interleavedCpuRounds } from "./interleave.js";
import { type Alg, makeKeys, signToken } from "./keys.js";
import { BENCH_PATH, type CreateJwtAuth, oursOptions } from "./ours.js";
import { ROOT } from "./report.js";

export interface VerifyCase {
  label: string;
  alg: Alg;
  cached: boolean;
  /** Calls per variant per round: about 10 ms of CPU. */
  ops: number;
}

export const VERIFY_CASES: readonly VerifyCase[] = [
  { label: "verify HS256, uncached", alg: "HS256", cached: false, ops: 1_500 },
  { label: "verify RS256, uncached", alg: "RS256", cached: false, ops: 300 },
  { label: "verify HS256, cache hit", alg: "HS256", cached: true, ops: 15_000 },
];

/** Each variant's CPU µs per call, round by round. */
export interface VerifySamples {
  base: number[];
  copy: number[];
  measured: number[];
}

async function measure(baseDir: string, c: VerifyCase, rounds: number): Promise<VerifySamples> {
  const keys = makeKeys(c.alg);
  const input = { method: "GET", path: BENCH_PATH, headers: { authorization: `Bearer ${signToken(keys)}` } };
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
  const samples = interleavedCpuRounds(
    [
      ["base", await make(baseDir, "")],
      ["copy", await make(baseDir, "?copy")],
      ["measured", await make(ROOT, "")],
    ],
    { rounds, ops: c.ops },
  );
  return {
    base: samples.get("base") ?? [],
    copy: samples.get("copy") ?? [],
    measured: samples.get("measured") ?? [],
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [baseDir, index, rounds] = process.argv.slice(2);
  const c = VERIFY_CASES[Number(index)];
  if (baseDir === undefined || c === undefined || !(Number(rounds) > 0)) {
    console.error("usage: tsx src/observability-verify.ts <base dir> <case index> <rounds>");
    process.exit(2);
  }
  console.log(JSON.stringify(await measure(baseDir, c, Number(rounds))));
}
