/**
 * The reference server (examples/server) in its own process, configured from the environment exactly as an
 * operator would: `node --import tsx reference-server.ts`. Prints `LISTENING <port>` (PORT=0), or
 * `UNAVAILABLE <why>` while the server is not there yet. The server is imported by path at run time, so the
 * bench does not typecheck the server's sources (they are not a package the bench depends on).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

interface ServerModules {
  loadConfig(env: NodeJS.ProcessEnv): unknown;
  startServer(config: unknown): Promise<{ port: number; stop(): Promise<void> }>;
}

const source = join(import.meta.dirname, "..", "..", "..", "examples", "server", "src");
let modules: ServerModules;
try {
  const config = (await import(pathToFileURL(join(source, "config.ts")).href)) as Pick<
    ServerModules,
    "loadConfig"
  >;
  const server = (await import(pathToFileURL(join(source, "server.ts")).href)) as Pick<
    ServerModules,
    "startServer"
  >;
  if (typeof config.loadConfig !== "function" || typeof server.startServer !== "function") {
    throw new Error("examples/server has no loadConfig/startServer yet");
  }
  modules = { loadConfig: config.loadConfig, startServer: server.startServer };
} catch (error) {
  console.log(`UNAVAILABLE ${(error as Error).message.split("\n")[0]}`);
  process.exit(0);
}

const running = await modules.startServer(modules.loadConfig(process.env));
console.log(`LISTENING ${running.port}`);
process.on("SIGTERM", () => {
  running.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
