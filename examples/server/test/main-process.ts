import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SERVER_DIR = fileURLToPath(new URL("..", import.meta.url));
const TSX = join(SERVER_DIR, "node_modules", ".bin", "tsx");

export interface Child {
  readonly process: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in stderr, or rejects when the process exits first. */
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves with the first match of `pattern` in stdout, or rejects when the process exits first. */
  waitForStdout(pattern: RegExp): Promise<RegExpMatchArray>;
  /** SIGKILL to the whole process group, as a crash, an OOM kill or `docker kill` does. */
  killTree(): Promise<void>;
}

/**
 * `src/main.ts` run by node through tsx's loader, with only the given variables (nothing leaks from the
 * test's env), in a process group of its own so that the whole tree can be killed at once.
 */
export function startMain(env: Record<string, string>, options: { tree?: boolean } = {}): Child {
  // One process by default: a start costs a second less on a loaded machine. `tree` runs the tsx CLI, which
  // runs the server in a child node process, like `pnpm start` or a process manager's wrapper: killed
  // together, the server becomes an orphan whose exit only init reaps, a zombie meanwhile.
  const [command, args] = options.tree
    ? [TSX, ["src/main.ts"]]
    : [process.execPath, ["--import", "tsx", "src/main.ts"]];
  const child = spawn(command, args, {
    cwd: SERVER_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output = { stdout: "", stderr: "" };
  const listeners = new Set<() => void>();
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream]?.on("data", (chunk: Buffer) => {
      output[stream] += chunk.toString();
      for (const listener of listeners) listener();
    });
  }
  // Exit once the streams are drained too, so the last line written before the exit is in the output.
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const waitFor = (stream: "stdout" | "stderr", pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output[stream].match(pattern);
        if (match) {
          listeners.delete(check);
          resolve(match);
        }
      };
      listeners.add(check);
      check();
      void exited.then((code) => {
        listeners.delete(check);
        reject(new Error(`server exited (${code}) before printing ${pattern}:\n${output.stderr}`));
      });
    });
  return {
    process: child,
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    exited,
    waitForStderr: (pattern) => waitFor("stderr", pattern),
    waitForStdout: (pattern) => waitFor("stdout", pattern),
    async killTree() {
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // Already gone.
      }
      await exited;
    },
  };
}

export async function stopMain(child: Child): Promise<number | null> {
  child.process.kill("SIGTERM");
  return child.exited;
}
