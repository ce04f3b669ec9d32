/**
 * The one place that reads the environment. Guarded so the core runs where `process` does not exist
 * (Workers, browsers); there every option must be passed explicitly.
 */
export function readEnv(name: string): string | undefined {
  if (typeof process === "undefined" || typeof process.env !== "object" || process.env === null)
    return undefined;
  const value = process.env[name];
  return value === undefined || value === "" ? undefined : value;
}
