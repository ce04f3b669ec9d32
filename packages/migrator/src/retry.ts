import { configError } from "@agent-platform/common/internal";

/** How a run retries what another session's lock made fail; see `MigratorOptions.retry`. */
export interface RetryOptions {
  /** Tries in all, the first included (1: no retry). Default 4. */
  readonly attempts?: number;
  /** The first wait; each further wait doubles it, up to `maxMs`. Default 500. */
  readonly baseMs?: number;
  /** The longest wait between two attempts. Default 10 000. */
  readonly maxMs?: number;
}

export interface RetryPolicy {
  readonly attempts: number;
  readonly baseMs: number;
  readonly maxMs: number;
}

/** What a run does when `retry` is not given. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseMs: 500, maxMs: 10_000 };
/** More tries than this only stretch an outage: each one waits a full lock timeout first. */
export const MAX_RETRY_ATTEMPTS = 100;
/** The longest `baseMs`/`maxMs`: a wait between attempts longer than an hour is a deploy that should fail. */
export const MAX_RETRY_WAIT_MS = 3_600_000;

/** The validated `retry` option: `false` is one attempt, anything not set takes its default. */
export function retryOption(value: RetryOptions | false | undefined): RetryPolicy {
  if (value === undefined) return DEFAULT_RETRY;
  if (value === false) return { ...DEFAULT_RETRY, attempts: 1 };
  if (typeof value !== "object" || value === null) {
    throw configError("migrator", "`retry` must be false or an object { attempts, baseMs, maxMs }", "retry");
  }
  const unknown = Object.keys(value).find((key) => !Object.hasOwn(DEFAULT_RETRY, key));
  if (unknown !== undefined) {
    throw configError(
      "migrator",
      `\`retry\` has an unknown key ${JSON.stringify(unknown)}; expected attempts, baseMs or maxMs`,
      "retry",
    );
  }
  const whole = (name: keyof RetryOptions, min: number, max: number): number => {
    const given = value[name];
    if (given === undefined) return DEFAULT_RETRY[name];
    if (typeof given !== "number" || !Number.isSafeInteger(given) || given < min || given > max) {
      throw configError(
        "migrator",
        `\`retry.${name}\` must be a whole number from ${min} to ${max}; got ${String(given)}`,
        `retry.${name}`,
      );
    }
    return given;
  };
  return {
    attempts: whole("attempts", 1, MAX_RETRY_ATTEMPTS),
    baseMs: whole("baseMs", 0, MAX_RETRY_WAIT_MS),
    maxMs: whole("maxMs", 0, MAX_RETRY_WAIT_MS),
  };
}

/**
 * The wait after failed attempt `attempt` (1-based): exponential up to `maxMs`, half of it random ("equal
 * jitter"), so runs that failed together do not come back together, and none comes back at once.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random) {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** One failed attempt of `withRetry`, as handed to `onRetry` before the wait. */
export interface FailedAttempt {
  /** 1-based. */
  readonly attempt: number;
  readonly error: unknown;
  /** The wait before the next attempt. */
  readonly delayMs: number;
}

/**
 * Runs `attempt` until it succeeds, its error is not `retryable`, or `policy.attempts` tries are used up;
 * waits `retryDelayMs` between tries. The last error is thrown as it is. An aborted `signal` ends the wait
 * at once with the signal's reason.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T>,
  options: {
    readonly retryable: (error: unknown, n: number) => boolean;
    readonly onRetry?: (failed: FailedAttempt) => void;
    readonly signal?: AbortSignal | undefined;
  },
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (n >= policy.attempts || !options.retryable(error, n)) throw error;
      const delayMs = retryDelayMs(policy, n);
      options.onRetry?.({ attempt: n, error, delayMs });
      await abortableSleep(delayMs, options.signal);
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
