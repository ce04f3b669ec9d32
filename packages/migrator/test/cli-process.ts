import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll } from "vitest";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const bin = fileURLToPath(new URL("../bin/platform-migrate.js", import.meta.url));

/** Runs the built `platform-migrate` in a child process, as a user would, with DATABASE_URL cleared. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, DATABASE_URL: "", ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

/** Fails the file up front, with the fix, when the CLI has not been built. */
export function requireBuiltCli(): void {
  beforeAll(() => {
    if (!existsSync(fileURLToPath(new URL("../dist/cli.js", import.meta.url)))) {
      throw new Error("dist/cli.js is missing: run `pnpm --filter @agent-platform/migrator build` first");
    }
  });
}
