import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { testServerEnv } from "../../helpers.js";

const SERVER_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The reference server as a child process (`node --import tsx src/main.ts`), as an operator runs it. */
export interface ChildServer {
  url: string;
  child: ChildProcess;
  output: string[];
  /** Sends `signal` and resolves when the process has exited. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export async function spawnServer(env: Record<string, string>): Promise<ChildServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "messaging-child-"));
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: SERVER_DIR,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? tmpdir(),
      ...(await testServerEnv(dataDir)),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = once(child, "exit");
  void exited.then(() => rm(dataDir, { recursive: true, force: true }));
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not listen:\n${output.join("\n")}`)), 60_000);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      output.push(line);
      const listening = /"msg":"Listening on (http:\/\/[^"]+)"/.exec(line);
      if (listening?.[1]) {
        clearTimeout(timer);
        resolve(listening[1]);
      }
    });
    void exited.then(([code]) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output.join("\n")}`));
    });
  });
  return {
    url,
    child,
    output,
    async kill(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
