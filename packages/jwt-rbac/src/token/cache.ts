interface Entry<V> {
  readonly value: V;
  /** Epoch milliseconds after which the entry is never served. */
  readonly expiresAt: number;
  /** Second-chance bit: set on a hit, so eviction approximates LRU without reordering on every hit. */
  used: boolean;
}

/**
 * Bounded cache of verified tokens, keyed by the token string. A hit is one Map lookup, an expiry
 * comparison and a bit set; eviction (CLOCK / second chance) is amortised O(1).
 */
export class TokenCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #max: number;
  readonly #ttlMs: number;

  constructor(max: number, ttlMs: number) {
    this.#max = max;
    this.#ttlMs = ttlMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(token: string, nowMs: number): V | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= nowMs) {
      this.#entries.delete(token);
      return undefined;
    }
    entry.used = true;
    return entry.value;
  }

  /** `notAfterMs`: when the token itself stops being valid (its `exp` plus tolerance), if it has one. */
  set(token: string, value: V, nowMs: number, notAfterMs: number | undefined): void {
    const expiresAt = Math.min(nowMs + this.#ttlMs, notAfterMs ?? Number.POSITIVE_INFINITY);
    if (expiresAt <= nowMs || this.#max <= 0) return;
    if (!this.#entries.has(token) && this.#entries.size >= this.#max) this.#evictOne(nowMs);
    this.#entries.set(token, { value, expiresAt, used: false });
  }

  clear(): void {
    this.#entries.clear();
  }

  #evictOne(nowMs: number): void {
    // Re-inserted entries are visited again with their bit cleared, so this ends within size + 1 steps.
    for (const [token, entry] of this.#entries) {
      this.#entries.delete(token);
      if (entry.used && entry.expiresAt > nowMs) {
        entry.used = false;
        this.#entries.set(token, entry);
        continue;
      }
      return;
    }
  }
}
