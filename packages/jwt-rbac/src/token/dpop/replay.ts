import type { ReplayStore } from "./options.js";

/** The in-memory store is full of unexpired `jti`s: the proof is refused rather than a replay allowed. */
export class ReplayStoreFullError extends Error {
  override readonly name = "ReplayStoreFullError";
}

/**
 * One process's `jti`s, each until its proof's window closes. Bounded: when full, expired entries are
 * dropped; when still full, `add` rejects (fail closed: evicting an unexpired `jti` would let its proof
 * be replayed). Replicas need a shared store (`PostgresReplayStore`).
 */
export class MemoryReplayStore implements ReplayStore {
  readonly #entries = new Map<string, number>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  add(key: string, expiresAtMs: number): boolean {
    const now = Date.now();
    const seen = this.#entries.get(key);
    if (seen !== undefined && seen > now) return false;
    // Entries go in roughly in expiry order: a couple of expired ones are dropped from the head each time.
    for (const [oldest, expires] of this.#entries) {
      if (expires > now) break;
      this.#entries.delete(oldest);
      if (this.#entries.size % 2 === 0) break;
    }
    if (this.#entries.size >= this.#max) {
      for (const [entry, expires] of this.#entries) if (expires <= now) this.#entries.delete(entry);
      if (this.#entries.size >= this.#max) {
        throw new ReplayStoreFullError(
          `DPoP replay store full (${this.#max} proofs within the window): raise dpop.replayMax or share a PostgresReplayStore`,
        );
      }
    }
    this.#entries.delete(key);
    this.#entries.set(key, expiresAtMs);
    return true;
  }
}
