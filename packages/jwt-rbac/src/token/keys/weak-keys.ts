import type { Logger } from "@agent-platform/common";
import type { JWK } from "jose";
import { keyWeakness } from "./key-strength.js";

/** A short, printable name for a JWKS key: its position and its `kid`, never key material. */
export function jwksKeyLabel(jwk: JWK, index: number): string {
  if (typeof jwk.kid !== "string") return `JWKS key #${index + 1}`;
  // The kid comes from the JWKS (possibly fetched): bounded and quoted, so a log line stays one line.
  return `JWKS key #${index + 1} (kid ${JSON.stringify(jwk.kid.slice(0, 64))})`;
}

/**
 * Skips the weak keys of a JWKS, warning once per key for the authenticator's lifetime: a remote
 * JWKS refetched every ten minutes with the same weak key logs it once, not every time.
 */
export class WeakKeyFilter {
  readonly #logger: Logger;
  readonly #warned = new Set<string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** True (after the one warning) when the key must be skipped. */
  skip(jwk: JWK, label: string, source: string): boolean {
    const weakness = keyWeakness(jwk);
    if (weakness === undefined) return false;
    // Public members identify the key; they stay in this set and never reach the log.
    const identity = JSON.stringify([jwk.kty, jwk.crv, jwk.kid, jwk.n, jwk.e, jwk.x, jwk.y]);
    if (!this.#warned.has(identity)) {
      this.#warned.add(identity);
      this.#logger.warn(`jwt-rbac: ${source}: ${label} skipped: ${weakness}`);
    }
    return true;
  }
}
