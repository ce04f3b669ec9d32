/**
 * A token bucket: `perSecond` tokens a second, at most `perSecond` saved. Bounds what an instance sends
 * out whatever comes in, so a flood of made-up tokens costs the endpoint a fixed rate.
 */
export class RateBound {
  readonly #perSecond: number;
  #tokens: number;
  #at = Number.NEGATIVE_INFINITY;

  constructor(perSecond: number) {
    this.#perSecond = perSecond;
    this.#tokens = perSecond;
  }

  /** True (and one token spent) when an outbound request may go now. */
  take(nowMs: number): boolean {
    if (this.#at !== Number.NEGATIVE_INFINITY) {
      this.#tokens = Math.min(this.#perSecond, this.#tokens + ((nowMs - this.#at) / 1000) * this.#perSecond);
    }
    this.#at = nowMs;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
