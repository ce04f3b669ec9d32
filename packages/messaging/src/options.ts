import { ConfigError } from "@agent-platform/common";

/**
 * Where the package runs. In `"production"` (the default: unset fails closed) a channel that cannot
 * authenticate its requests (WhatsApp's `skipSignatureValidation`, Telegram's `allowUnauthenticated`) is
 * refused; elsewhere it is allowed with a warning.
 */
export const ENVIRONMENTS = ["production", "development", "test"] as const;
/** Where the inbox runs: `"production"` (the default) refuses channels that do not authenticate their webhooks. */
export type Environment = (typeof ENVIRONMENTS)[number];

/** The longest delay a Node timer keeps: a longer one fires after 1 ms, so every timeout stays within it. */
export const MAX_TIMER_MS = 2_147_483_647;

/** How long a channel waits for its chat product's API by default (`apiTimeoutMs`). */
export const DEFAULT_API_TIMEOUT_MS = 10_000;

interface Problem {
  option: string;
  message: string;
}

/**
 * The options of one factory, checked in one place: each check records a problem naming its option and
 * returns the value to use, and `done()` throws every problem at once as one `ConfigError` (component
 * `"messaging"`; `option` set when a single option is at fault). Values of secret options are never echoed.
 */
export class OptionChecks {
  private readonly problems: Problem[] = [];

  /** `scope` prefixes the message: the factory's name (`whatsapp`, `createMessaging`). */
  constructor(private readonly scope: string) {}

  problem(option: string, message: string): void {
    this.problems.push({ option, message });
  }

  /** Refuses keys the factory does not know: a misspelt option would otherwise be silently ignored. */
  knownKeys(prefix: string, value: object, known: readonly string[]): void {
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) this.problem(`${prefix}${key}`, "is not an option here");
    }
  }

  /** A whole number from `min` to `max`; `fallback` when undefined. */
  integer(option: string, value: unknown, fallback: number, min: number, max = MAX_TIMER_MS): number {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      this.problem(option, `must be a whole number from ${min} to ${max}; got ${describe(value)}`);
      return fallback;
    }
    return value;
  }

  /** A non-empty string (`undefined` when absent and not required); never echoed, it may be a secret. */
  text(option: string, value: unknown, required: boolean): string | undefined {
    if (value === undefined || value === "") {
      if (required) this.problem(option, "is required");
      return undefined;
    }
    if (typeof value !== "string") {
      this.problem(option, `must be a string; got ${typeof value}`);
      return undefined;
    }
    return value;
  }

  boolean(option: string, value: unknown): boolean {
    if (value === undefined) return false;
    if (typeof value !== "boolean") this.problem(option, `must be true or false; got ${describe(value)}`);
    return value === true;
  }

  /** An http: or https: URL without credentials; `fallback` when undefined. */
  url(option: string, value: unknown, fallback: string): string {
    if (value === undefined) return fallback;
    let url: URL | undefined;
    try {
      url = typeof value === "string" ? new URL(value) : undefined;
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      this.problem(option, "must be an http: or https: URL");
      return fallback;
    }
    if (url.username !== "" || url.password !== "") {
      this.problem(option, "must not carry credentials (user:password@)");
      return fallback;
    }
    return value as string;
  }

  oneOf<T extends string>(option: string, value: unknown, allowed: readonly T[], fallback: T): T {
    if (value === undefined) return fallback;
    if (!allowed.includes(value as T)) {
      this.problem(option, `must be one of ${allowed.map((each) => `"${each}"`).join(", ")}`);
      return fallback;
    }
    return value as T;
  }

  /** Throws the problems found, if any. */
  done(): void {
    if (this.problems.length === 0) return;
    const problems = this.problems.map(({ option, message }) => `${option} ${message}`);
    const options = new Set(this.problems.map((each) => each.option));
    throw new ConfigError(`${this.scope}: ${problems.join("; ")}`, {
      component: "messaging",
      option: options.size === 1 ? this.problems[0]?.option : undefined,
      problems,
    });
  }
}

/** A value as a problem may show it: numbers and booleans as they are, anything else by its type only. */
function describe(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return value === null ? "null" : typeof value;
}

/** An options argument that is not an object is reported, and read as empty. */
export function optionsObject(checks: OptionChecks, option: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    checks.problem(option, "must be an object");
    return {};
  }
  return value as Record<string, unknown>;
}
