/**
 * Delay before attempt `attempt + 1` after `attempt` failed: exponential from `baseMs`, capped at `maxMs`,
 * with jitter in the upper half so workers that failed together do not retry together.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential * (0.5 + random() / 2));
}
