/**
 * A/B of one uncached verification path: `authenticateNow` of this checkout's jwt-rbac build and, with --base=<dir>,
 * of another checkout's (e.g. a `git worktree` of the commit before a change, built), beside fast-jwt and the floor,
 * interleaved in rounds on one token; prints the median CPU per op of each and its ratio to the floor. A synchronous
 * loop (no 32 in flight), for deciding whether a change helps; the published figures are `pnpm bench`'s. Usage:
 *   tsx src/ab-verify.ts <HS256|RS256|ES256|EdDSA> [--rounds=11] [--ops=200000] [--cache] [--base=<checkout>]
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createVerifier } from "fast-jwt";
import { createFloorVerifier } from "./floor.js";
import { interleavedCpuRounds } from "./interleave.js";
import { ALGORITHMS, type Alg, makeKeys, signToken } from "./keys.js";
import { BENCH_PATH, type CreateJwtAuth, oursOptions } from "./ours.js";
import { median } from "./stats.js";

const [algArg, ...flags] = process.argv.slice(2);
const flag = (name: string) => flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3);
if (!ALGORITHMS.includes(algArg as Alg)) {
  console.error(
    `usage: tsx src/ab-verify.ts <${ALGORITHMS.join("|")}> [--rounds=N] [--ops=N] [--cache] [--base=<dir>]`,
  );
  process.exit(2);
}
const alg = algArg as Alg;
const rounds = Number(flag("rounds") ?? 11);
const ops = Number(flag("ops") ?? 200_000);
const cached = flags.includes("--cache");
const keys = makeKeys(alg);
const token = signToken(keys);
const input = { method: "GET", path: BENCH_PATH, headers: { authorization: `Bearer ${token}` } };

const checkouts: [string, string][] = [["this checkout", join(import.meta.dirname, "..", "..")]];
const base = flag("base");
if (base !== undefined) checkouts.unshift(["base", base]);
const variants: [string, () => unknown][] = [];
for (const [name, dir] of checkouts) {
  const entry = pathToFileURL(join(dir, "packages", "jwt-rbac", "dist", "node", "index.js")).href;
  const { createJwtAuth } = (await import(entry)) as { createJwtAuth: CreateJwtAuth };
  const auth = createJwtAuth(
    oursOptions(keys, { authorization: false, ...(cached ? {} : { cache: false }) }),
  );
  await (auth as unknown as { ready: Promise<void> }).ready;
  variants.push([`ours (${name})`, () => auth.authenticateNow(input)]);
}
const fastJwt = createVerifier({ key: keys.verificationText, algorithms: [alg], cache: false });
const floor = createFloorVerifier(alg, keys.verifyKey);
variants.push(["fast-jwt, no cache", () => fastJwt(token)], ["floor", () => floor(token)]);

const samples = interleavedCpuRounds(variants, { rounds, ops });
const floorUs = median(samples.get("floor") ?? []);
console.log(
  `${alg}, ${cached ? "cache on" : "cache off"}, ${rounds} rounds of ${ops} ops, median CPU µs/op:`,
);
for (const [name, values] of samples) {
  const us = median(values);
  console.log(`  ${name.padEnd(28)} ${us.toFixed(3)} µs  ${(us / floorUs).toFixed(3)}x floor`);
}
