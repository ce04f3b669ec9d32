/**
 * Two builds' servers in ONE process, for the observability group's "instrumentation off" rows:
 *   node --import tsx paired-servers.ts <hono-ours|reference>
 * with BENCH_PAIRED (JSON: one `{ dir, env }` per build, `dir` a built checkout; `env` the reference server's
 * environment). Prints `LISTENING <port> <port> ...` in that order. Both builds then share what makes one process
 * run a few percent fast or slow for its whole life (hash seeds, heap sizing, where the binary's code lies), so a
 * round-by-round comparison of them is left with the difference of their own code. Rounds load one server at a time.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { serve } from "@hono/node-server";
import type { MiddlewareHandler } from "hono";
import { importKeys, type KeyExport } from "../keys.js";
import { BENCH_PATH, oursOptions } from "../ours.js";

interface Build {
  dir: string;
  env?: Record<string, string>;
}

const mode = process.argv[2];
const builds = JSON.parse(process.env.BENCH_PAIRED ?? "[]") as Build[];
const stops: (() => Promise<void>)[] = [];

async function honoOurs(build: Build): Promise<number> {
  const keys = importKeys(JSON.parse(process.env.BENCH_KEYS ?? "{}") as KeyExport);
  const entry = pathToFileURL(join(build.dir, "packages", "jwt-rbac", "dist", "node", "hono.js")).href;
  const { jwtRbac } = (await import(entry)) as { jwtRbac: (options: unknown) => MiddlewareHandler };
  // The Hono of that build's own install: its adapter throws that copy's HTTPException, which another copy's app
  // would answer with a 500.
  const honoEntry = join(build.dir, "packages", "jwt-rbac", "node_modules", "hono", "dist", "index.js");
  const { Hono } = (await import(pathToFileURL(honoEntry).href)) as typeof import("hono");
  const app = new Hono();
  app.use(jwtRbac(oursOptions(keys, { authorization: true })));
  app.get(BENCH_PATH, (c) => c.json({ ok: true }));
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port));
    stops.push(() => new Promise((done) => server.close(() => done())));
  });
}

interface ServerModules {
  loadConfig(env: NodeJS.ProcessEnv): unknown;
  startServer(config: unknown): Promise<{ port: number; stop(): Promise<void> }>;
}

async function reference(build: Build): Promise<number> {
  const source = join(build.dir, "examples", "server", "src");
  const { loadConfig } = (await import(pathToFileURL(join(source, "config.ts")).href)) as ServerModules;
  const { startServer } = (await import(pathToFileURL(join(source, "server.ts")).href)) as ServerModules;
  const running = await startServer(loadConfig({ ...process.env, ...build.env }));
  stops.push(() => running.stop());
  return running.port;
}

if (builds.length === 0 || (mode !== "hono-ours" && mode !== "reference")) {
  console.error('usage: BENCH_PAIRED=\'[{"dir":…,"env":{…}},…]\' paired-servers.ts <hono-ours|reference>');
  process.exit(2);
}
const ports: number[] = [];
for (const build of builds) ports.push(await (mode === "hono-ours" ? honoOurs(build) : reference(build)));
console.log(`LISTENING ${ports.join(" ")}`);
process.on("SIGTERM", () => {
  Promise.all(stops.map((stop) => stop())).then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
