import type { Logger } from "@agent-platform/common";
import type { JWK } from "jose";
import type { JwtAlgorithm } from "../../options.js";
import type { SignatureVerifier } from "../verify/signature-types.js";
import { describeUrl, type FetchLimits, fetchJson } from "./fetch-json.js";
import { type FreshnessBounds, freshnessMs } from "./freshness.js";
import { indexJwks, type KeyIndex } from "./keys.js";
import { WeakKeyFilter } from "./weak-keys.js";

export interface RemoteKeysSettings extends FetchLimits, FreshnessBounds {
  /** Refetches (and failed fetches) are at least this far apart. */
  readonly cooldownMs: number;
}

export interface RemoteKeySetOptions {
  /** Where the JWKS is: the configured URL, or one found by discovery (which may fail like a fetch). */
  readonly locate: () => Promise<URL>;
  /** For log lines. */
  readonly name: string;
  readonly algorithms: readonly JwtAlgorithm[];
  readonly settings: RemoteKeysSettings;
  readonly verifier: SignatureVerifier;
  readonly logger: Logger;
  /** The key set's content changed (not merely refetched): tokens verified with the old keys must go. */
  readonly onChange: () => void;
}

interface Snapshot {
  readonly index: KeyIndex;
  /** Canonical text of the admitted keys: equal text, same keys. */
  readonly content: string;
  freshUntil: number;
}

/** Bounds of what a fetched JWKS may hold; a set beyond them is refused whole and the old keys kept. */
const MAX_REMOTE_KEYS = 100;
const MAX_KID_LENGTH = 256;

/** Order-independent text of a JWK: the same key serialised another way gives the same text. */
function canonical(jwk: JWK): string {
  const record = jwk as Record<string, unknown>;
  return JSON.stringify(
    Object.keys(record)
      .sort()
      .map((name) => [name, record[name]]),
  );
}

/**
 * The one place where fetched keys are admitted. Keys that are not plain public signing keys are
 * skipped with a warning, never a failure of the whole set: one odd key must not lock everyone out.
 * Weak keys (RSA under 2048 bits, bad exponents, ROCA, off-curve points) are skipped afterwards,
 * by the same rule as local JWKS keys (`indexJwks`).
 */
function admitFetchedKey(value: unknown, position: number, name: string, logger: Logger): JWK | undefined {
  const skip = (why: string) => {
    logger.warn(`jwt-rbac: ${name}: key #${position + 1} skipped: ${why}`);
    return undefined;
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return skip("not a JSON object");
  const jwk = value as JWK;
  if (typeof jwk.kty !== "string") return skip('no "kty"');
  if (jwk.kty === "oct") return skip("a shared secret has no place in a public key set");
  if (jwk.kid !== undefined && (typeof jwk.kid !== "string" || jwk.kid.length > MAX_KID_LENGTH)) {
    return skip(`"kid" is not a string of at most ${MAX_KID_LENGTH} characters`);
  }
  return jwk;
}

/**
 * A remote JWKS with fetch discipline: at most one fetch in flight, attempts (failed ones too) at
 * least a cooldown apart, freshness from `Cache-Control` within bounds, the last good keys kept
 * when a refetch fails (logged once per failure streak), and keys re-imported only when the set's
 * content changes. Never fetches on its own: only `refresh()` does, which callers reach for a token
 * that has passed every check before the key lookup.
 */
export class RemoteKeySet {
  readonly #options: RemoteKeySetOptions;
  /** Lives as long as the set: a weak key served on every refetch is warned about once. */
  readonly #weakKeys: { readonly filter: WeakKeyFilter; readonly source: string };
  #snapshot: Snapshot | undefined;
  #inflight: Promise<void> | undefined;
  #lastAttempt = Number.NEGATIVE_INFINITY;
  #failing = false;

  constructor(options: RemoteKeySetOptions) {
    this.#options = options;
    this.#weakKeys = { filter: new WeakKeyFilter(options.logger), source: options.name };
  }

  /** The keys of the last good fetch, if any. */
  get keys(): KeyIndex | undefined {
    return this.#snapshot?.index;
  }

  /** True when there are no keys, or they are past their freshness. */
  stale(nowMs: number): boolean {
    return this.#snapshot === undefined || nowMs >= this.#snapshot.freshUntil;
  }

  /**
   * Starts a fetch unless one is in flight (then that one is returned) or the last attempt is within
   * the cooldown (then `undefined`: nothing to wait for). The promise never rejects.
   */
  refresh(nowMs: number): Promise<void> | undefined {
    if (this.#inflight !== undefined) return this.#inflight;
    if (nowMs - this.#lastAttempt < this.#options.settings.cooldownMs) return undefined;
    this.#lastAttempt = nowMs;
    this.#inflight = this.#load().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #load(): Promise<void> {
    const { name, logger, settings } = this.#options;
    try {
      const url = await this.#options.locate();
      const { value, headers } = await fetchJson(url, settings);
      const keys = (value as { keys?: unknown } | null)?.keys;
      if (typeof value !== "object" || value === null || !Array.isArray(keys)) {
        throw new Error(`${describeUrl(url)}: not a JWKS (no "keys" array)`);
      }
      if (keys.length > MAX_REMOTE_KEYS) {
        throw new Error(`${describeUrl(url)}: more than ${MAX_REMOTE_KEYS} keys`);
      }
      const admitted = keys.flatMap((key, position) => admitFetchedKey(key, position, name, logger) ?? []);
      const content = admitted.map(canonical).sort().join("\n");
      const freshUntil = Date.now() + freshnessMs(headers.get("cache-control"), settings);
      const previous = this.#snapshot;
      if (previous !== undefined && previous.content === content) {
        previous.freshUntil = freshUntil;
      } else {
        const index = await indexJwks(
          admitted,
          this.#options.algorithms,
          this.#options.verifier,
          logger,
          this.#weakKeys,
          (label, problem) => logger.warn(`jwt-rbac: ${name}: ${label} skipped: ${problem}`),
        );
        if (index.all.size === 0) {
          throw new Error(`${describeUrl(url)}: no key usable with ${this.#options.algorithms.join(", ")}`);
        }
        this.#snapshot = { index, content, freshUntil };
        if (previous !== undefined) this.#options.onChange();
      }
      if (this.#failing) logger.warn(`jwt-rbac: ${name}: fetched again; failure streak over`);
      this.#failing = false;
    } catch (error) {
      // Once per failure streak: a down endpoint under load must not flood the log.
      if (!this.#failing) {
        const keeping = this.#snapshot === undefined ? "no keys yet" : "keeping the last good keys";
        logger.warn(`jwt-rbac: ${name} unavailable (${(error as Error).message}); ${keeping}`);
      }
      this.#failing = true;
    }
  }
}
