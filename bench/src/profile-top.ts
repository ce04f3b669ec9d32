/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and the total (self +
 * callees) time of every function whose file matches a filter. Usage:
 *   tsx src/profile-top.ts <file.cpuprofile> [--top=25] [--match=jwt-rbac] [--requests=N] [--skip-ms=N]
 * With --requests (how many requests the process served), times are also shown as µs per request.
 * To profile the HTTP servers, run the bench with BENCH_CPU_PROF_DIR=<dir>: every server child writes its profile there.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, ...flags] = process.argv.slice(2);
if (!file) {
  console.error("usage: tsx src/profile-top.ts <file.cpuprofile> [--top=25] [--match=<text in file path>]");
  process.exit(2);
}
const flag = (name: string) => flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3);
const top = Number(flag("top") ?? 25);
const match = flag("match");
const requests = Number(flag("requests") ?? 0);
// Leaves out the first N ms of the profile: a server's start (module loading, tsx, migrations) and warm-up.
const skipUs = Number(flag("skip-ms") ?? 0) * 1000;

const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
let elapsedUs = 0;
for (const [i, id] of profile.samples.entries()) {
  elapsedUs += profile.timeDeltas[i] ?? 0;
  if (elapsedUs >= skipUs) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

const label = (n: ProfileNode) => {
  const url = n.callFrame.url
    .replace(/^file:\/\//, "")
    .replace(/.*\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "");
  const where = url.replace(/.*\/(packages|examples|bench)\//, "$1/");
  return `${n.callFrame.functionName || "(anonymous)"} ${where ? `${where}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
};

// Self time, merged by function (a function appears once per distinct call path in the tree).
const self = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (node) self.set(label(node), (self.get(label(node)) ?? 0) + us);
}
const pct = (us: number) =>
  `${((us / totalUs) * 100).toFixed(1).padStart(5)}%${requests > 0 ? `${(us / requests).toFixed(1).padStart(8)} µs/req` : ""}`;
console.log(`${file}: ${(totalUs / 1000).toFixed(0)} ms sampled\n\nself time:`);
for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)}  ${name}`);

if (match) {
  // Total time: self time of the node and everything below it, counted once per function along a path.
  const total = new Map<string, number>();
  const visit = (id: number, onPath: Set<string>): number => {
    const node = byId.get(id) as ProfileNode;
    let us = selfUs.get(id) ?? 0;
    const name = label(node);
    const first = !onPath.has(name);
    if (first) onPath.add(name);
    for (const child of node.children ?? []) us += visit(child, onPath);
    if (first) {
      onPath.delete(name);
      if (node.callFrame.url.includes(match)) total.set(name, (total.get(name) ?? 0) + us);
    }
    return us;
  };
  visit(profile.nodes[0]?.id ?? 1, new Set());
  console.log(`\ntotal time (self + callees) of functions in files matching "${match}":`);
  for (const [name, us] of [...total].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${pct(us)}  ${name}`);
}
