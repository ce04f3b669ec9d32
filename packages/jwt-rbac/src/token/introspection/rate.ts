/**
 * A token bucket: `perSecond` tokens a second, at most `burst` saved (default `perSecond`, at least one). Bounds
 * what an instance sends out whatever comes in, so a flood of made-up tokens costs the endpoint a fixed rate.
 */
export class RateBound {
  readonly #perSecond: number;
  readonly #burst: number;
  #tokens: number;
  #at = Number.NEGATIVE_INFINITY;

  constructor(perSecond: number, burst = Math.max(1, perSecond)) {
    this.#perSecond = perSecond;
    this.#burst = burst;
    this.#tokens = burst;
  }

  /** True (and one token spent) when an outbound request may go now. */
  take(nowMs: number): boolean {
    // Callers pass a clock read before an await: an earlier reading than the last one refills nothing.
    if (nowMs > this.#at) {
      if (this.#at !== Number.NEGATIVE_INFINITY) {
        this.#tokens = Math.min(this.#burst, this.#tokens + ((nowMs - this.#at) / 1000) * this.#perSecond);
      }
      this.#at = nowMs;
    }
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
