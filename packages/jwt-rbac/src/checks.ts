import { configError } from "@agent-platform/common/internal";

// The option checks every feature's resolver shares; a leaf: it imports nothing of the package.

/** One string or a list of them as a set; `undefined` stays `undefined`. */
export function toSet(value: string | readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  return new Set(typeof value === "string" ? [value] : value);
}

/** A positive safe integer, or a ConfigError naming the option. */
export function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw configError("jwt-rbac", `${name} must be a positive integer`);
  return value;
}

/** A finite number of at least 0, or a ConfigError naming the option. */
export function nonNegativeNumber(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0)
    throw configError("jwt-rbac", `${name} must be a non-negative number`);
  return value;
}
