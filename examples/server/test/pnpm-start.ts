import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { closedPort } from "./ports.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const POLL_MS = 20;

export interface PnpmStart {
  readonly port: number;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Milliseconds from spawning `pnpm start` to the first 200 of `GET /health`, polled every 20 ms. */
  readonly ready: Promise<number>;
  /** Ctrl-C as a terminal sends it (SIGINT to the process group); resolves with the exit status or signal. */
  interrupt(): Promise<number | NodeJS.Signals | null>;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** `pnpm start` at the repository root as a user types it, on `dataDir` and a free port, nothing else set. */
export async function pnpmStart(dataDir: string, giveUpMs = 120_000): Promise<PnpmStart> {
  const port = await closedPort();
  const started = performance.now();
  const child: ChildProcess = spawn("pnpm", ["start"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PLATFORM_DATA_DIR: dataDir,
      PORT: String(port),
    },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so a SIGINT to the group reaches pnpm and the server together, as a terminal's does.
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let exitedEarly = false;
  const exited = new Promise<number | NodeJS.Signals | null>((done) =>
    child.on("exit", (code, signal) => {
      exitedEarly = true;
      done(signal ?? code);
    }),
  );
  const ready = (async () => {
    const url = `http://127.0.0.1:${port}/health`;
    while (!(await healthy(url))) {
      if (exitedEarly || performance.now() - started > giveUpMs) {
        child.kill("SIGKILL");
        throw new Error(`pnpm start did not answer /health:\n${stderr}`);
      }
      await new Promise((wait) => setTimeout(wait, POLL_MS));
    }
    return Math.round(performance.now() - started);
  })();
  return {
    port,
    stdout: () => stdout,
    stderr: () => stderr,
    ready,
    interrupt() {
      if (child.pid !== undefined && !exitedEarly) process.kill(-child.pid, "SIGINT");
      return exited;
    },
  };
}
