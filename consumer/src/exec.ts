import { execFile } from "node:child_process";

/**
 * The environment a user's shell would give a tool: without the npm_config_* variables that pnpm
 * exports to scripts, which would otherwise reconfigure the consumer's npm (registry, cache, store).
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.toLowerCase().startsWith("npm_")) env[name] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to completion; rejects with its output when it fails, so the test shows why. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = userEnv(),
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
