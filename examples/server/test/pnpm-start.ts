import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { closedPort } from "./ports.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const POLL_MS = 20;

export interface PnpmStart {
  readonly port: number;
  /** The pnpm process's id (the server runs below it). */
  readonly pid: number;
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

/** util-linux's `script`, which runs a command on a pseudo-terminal; undefined where it is missing. */
export const SCRIPT = ["/usr/bin/script", "/bin/script"].find((path) => existsSync(path));

export interface PnpmStartOptions {
  /**
   * On a pseudo-terminal (through `script`): stdout is a TTY, so the logs are pretty-printed, everything
   * arrives on `stdout()`, and `interrupt()` types Ctrl-C, which the terminal turns into SIGINT for the
   * foreground process group. Otherwise plain pipes, and `interrupt()` signals the process group itself.
   */
  readonly terminal?: boolean;
  readonly giveUpMs?: number;
}

/** `pnpm start` at the repository root as a user types it, on `dataDir` and a free port, nothing else set. */
export async function pnpmStart(dataDir: string, options: PnpmStartOptions = {}): Promise<PnpmStart> {
  const { terminal = false, giveUpMs = 120_000 } = options;
  if (terminal && SCRIPT === undefined) throw new Error("util-linux's script is not installed");
  const port = await closedPort();
  const started = performance.now();
  const [command, args] = terminal
    ? // `exec`, so that the exit status is pnpm's own, not that of a shell that got the Ctrl-C as well.
      [SCRIPT as string, ["--quiet", "--flush", "--return", "--command", "exec pnpm start", "/dev/null"]]
    : ["pnpm", ["start"]];
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PLATFORM_DATA_DIR: dataDir,
      PORT: String(port),
      ...(terminal ? { TERM: "xterm" } : {}),
    },
    stdio: [terminal ? "pipe" : "ignore", "pipe", "pipe"],
    // Its own process group, so a SIGINT to the group reaches pnpm and the server together, as a terminal's does.
    detached: !terminal,
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
    pid: child.pid ?? 0,
    stdout: () => stdout,
    stderr: () => stderr,
    ready,
    interrupt() {
      if (exitedEarly) return exited;
      if (terminal) child.stdin?.write("\x03");
      else if (child.pid !== undefined) process.kill(-child.pid, "SIGINT");
      return exited;
    },
  };
}
