interface Entry<V> {
  /** The whole token: the map is keyed by its end only (see keyOf), so a hit compares it in full. */
  readonly token: string;
  readonly value: V;
  /** Epoch milliseconds after which the entry is never served. */
  readonly expiresAt: number;
  /** Second-chance bit: set on a hit, so eviction approximates LRU without reordering on every hit. */
  used: boolean;
}

/**
 * Characters of a token's end that key the map. A request's token is a new string each time, so a lookup hashes
 * the whole key: an RS256 token (about 550 characters) cost 0.5 µs more per request than an HS256 one (about 250)
 * until the key was cut to the signature's end, which differs between any two signed tokens.
 */
const KEY_CHARS = 64;

function keyOf(token: string): string {
  return token.length <= KEY_CHARS ? token : token.slice(-KEY_CHARS);
}

/**
 * Bounded cache of verified tokens, keyed by the end of the token string (a hit compares the whole token). A hit is one Map lookup, an expiry
 * comparison and a bit set; eviction (CLOCK / second chance) is amortised O(1).
 *
 * Admission on the second sighting: the first `set` of a token only notes it in a "seen once" set
 * (TinyLFU's doorkeeper, bounded like the cache, oldest forgotten first); the second stores it. A
 * token used once (fresh tokens per request) then costs a set insert instead of an entry, an
 * eviction and the garbage of both, and cannot push out tokens that are in use.
 */
export class TokenCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #seenOnce = new Set<string>();
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
    const key = keyOf(token);
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.token !== token) return undefined;
    if (entry.expiresAt <= nowMs) {
      this.#entries.delete(key);
      return undefined;
    }
    entry.used = true;
    return entry.value;
  }

  /** `notAfterMs`: when the token itself stops being valid (its `exp` plus tolerance), if it has one. */
  set(token: string, value: V, nowMs: number, notAfterMs: number | undefined): void {
    const expiresAt = Math.min(nowMs + this.#ttlMs, notAfterMs ?? Number.POSITIVE_INFINITY);
    if (expiresAt <= nowMs || this.#max <= 0) return;
    const key = keyOf(token);
    if (!this.#entries.has(key)) {
      if (!this.#admit(key)) return;
      if (this.#entries.size >= this.#max) this.#evictOne(nowMs);
    }
    // Another token with the same end (never two signed ones in practice) is replaced: the cache only forgets.
    this.#entries.set(key, { token, value, expiresAt, used: false });
  }

  clear(): void {
    this.#entries.clear();
    this.#seenOnce.clear();
  }

  /** True on a token's second sighting (since it was last forgotten); notes it on the first. */
  #admit(key: string): boolean {
    if (this.#seenOnce.delete(key)) return true;
    if (this.#seenOnce.size >= this.#max) {
      // A Set iterates in insertion order: the first is the oldest sighting.
      for (const oldest of this.#seenOnce) {
        this.#seenOnce.delete(oldest);
        break;
      }
    }
    this.#seenOnce.add(key);
    return false;
  }

  #evictOne(nowMs: number): void {
    // Re-inserted entries are visited again with their bit cleared, so this ends within size + 1 steps.
    for (const [key, entry] of this.#entries) {
      this.#entries.delete(key);
      if (entry.used && entry.expiresAt > nowMs) {
        entry.used = false;
        this.#entries.set(key, entry);
        continue;
      }
      return;
    }
  }
}
