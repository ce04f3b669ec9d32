import type { ReplayStore } from "./options.js";

/** The in-memory store is full of unexpired `jti`s: the proof is refused rather than a replay allowed. */
export class ReplayStoreFullError extends Error {
  override readonly name = "ReplayStoreFullError";
}

/**
 * One client (one key thumbprint) holds its whole share of the in-memory store: its proofs are refused
 * until some expire, while other clients' proofs are still accepted.
 */
export class ReplayShareFullError extends Error {
  override readonly name = "ReplayShareFullError";
}

/** The share of the in-memory store one key thumbprint may hold by default: a tenth. */
export const defaultReplayShare = (max: number): number => Math.max(1, Math.floor(max / 10));

/** The client a key belongs to: the key thumbprint before the first `:` (`<jkt>:<jti>`), or the whole key. */
function clientOf(key: string): string {
  const colon = key.indexOf(":");
  return colon < 0 ? key : key.slice(0, colon);
}

/**
 * One process's `jti`s, each until its proof's window closes, grouped by the key thumbprint that starts
 * each key. Bounded twice: at most `max` in all and `maxPerKey` per thumbprint (default a tenth of `max`),
 * so one client filling the store cannot lock the others out. Expired entries are dropped as new ones come;
 * when a bound is still reached, `add` rejects (fail closed: evicting an unexpired `jti` would let its
 * proof be replayed). Replicas need a shared store (`PostgresReplayStore`).
 */
export class MemoryReplayStore implements ReplayStore {
  /** Per thumbprint, its `jti` keys in insertion (roughly expiry) order. */
  readonly #clients = new Map<string, Map<string, number>>();
  readonly #max: number;
  readonly #maxPerKey: number;
  #size = 0;

  constructor(max: number, maxPerKey = defaultReplayShare(max)) {
    this.#max = max;
    this.#maxPerKey = Math.min(max, maxPerKey);
  }

  get size(): number {
    return this.#size;
  }

  /** Drops a client's expired entries from its head, at most `limit` of them. */
  #dropExpired(client: string, entries: Map<string, number>, now: number, limit: number): void {
    let dropped = 0;
    for (const [key, expires] of entries) {
      if (expires > now || dropped >= limit) break;
      entries.delete(key);
      dropped++;
    }
    this.#size -= dropped;
    if (entries.size === 0) this.#clients.delete(client);
  }

  add(key: string, expiresAtMs: number): boolean {
    const now = Date.now();
    const client = clientOf(key);
    let entries = this.#clients.get(client);
    if (entries !== undefined) {
      const seen = entries.get(key);
      if (seen !== undefined && seen > now) return false;
      // A couple of expired entries dropped each time keeps a steady client's share from filling up.
      this.#dropExpired(client, entries, now, 2);
      if (entries.size >= this.#maxPerKey) this.#dropExpired(client, entries, now, Number.POSITIVE_INFINITY);
      if (entries.size >= this.#maxPerKey) {
        throw new ReplayShareFullError(
          `DPoP replay store: one key holds ${this.#maxPerKey} proofs within the window (its proofs are refused until they expire): raise dpop.replayMaxPerKey or share a PostgresReplayStore`,
        );
      }
    }
    if (this.#size >= this.#max) {
      for (const [other, held] of this.#clients)
        this.#dropExpired(other, held, now, Number.POSITIVE_INFINITY);
      if (this.#size >= this.#max) {
        throw new ReplayStoreFullError(
          `DPoP replay store full (${this.#max} proofs within the window): raise dpop.replayMax or share a PostgresReplayStore`,
        );
      }
    }
    entries = this.#clients.get(client);
    if (entries === undefined) {
      entries = new Map();
      this.#clients.set(client, entries);
    }
    if (!entries.delete(key)) this.#size++;
    entries.set(key, expiresAtMs);
    return true;
  }
}
