import { configError } from "@agent-platform/common/internal";
import { base64url } from "jose";
import type { DpopNonceOptions } from "./options.js";
import { DEFAULT_DPOP_NONCE_ROTATE_MS } from "./options.js";

const encoder = new TextEncoder();

/** Equal-length strings compared without an early exit; lengths are public (every nonce has the same one). */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Stateless server nonces: `<window>.<HMAC-SHA256(secret, window)>`, the window being the time divided
 * by `rotateMs`. Replicas with the same secret compute the same nonce without talking to each other; the
 * current and the previous window's nonces are accepted, so a nonce lives between one and two periods.
 */
export class NonceSource {
  readonly #rotateMs: number;
  readonly #key: Promise<CryptoKey>;
  /** The last two windows' nonces: a nonce is computed once per window, not per request. */
  readonly #byWindow = new Map<number, Promise<string>>();

  constructor(options: DpopNonceOptions) {
    const rotateMs = options.rotateMs ?? DEFAULT_DPOP_NONCE_ROTATE_MS;
    if (!Number.isSafeInteger(rotateMs) || rotateMs < 1000) {
      throw configError("jwt-rbac", "dpop.nonce.rotateMs must be an integer of at least 1000 ms");
    }
    this.#rotateMs = rotateMs;
    let secret: Uint8Array;
    if (options.secret === undefined) {
      secret = crypto.getRandomValues(new Uint8Array(32));
    } else {
      if (typeof options.secret !== "string" || encoder.encode(options.secret).length < 32) {
        throw configError(
          "jwt-rbac",
          "dpop.nonce.secret must be a random string of at least 32 bytes, the same on every replica",
        );
      }
      secret = encoder.encode(options.secret);
    }
    this.#key = crypto.subtle.importKey(
      "raw",
      secret as Uint8Array<ArrayBuffer>,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
  }

  #nonce(window: number): Promise<string> {
    let nonce = this.#byWindow.get(window);
    if (nonce === undefined) {
      const label = window.toString(36);
      nonce = this.#key
        .then((key) => crypto.subtle.sign("HMAC", key, encoder.encode(`dpop-nonce:${label}`)))
        .then((mac) => `${label}.${base64url.encode(new Uint8Array(mac).subarray(0, 16))}`);
      if (this.#byWindow.size >= 4) this.#byWindow.clear();
      this.#byWindow.set(window, nonce);
    }
    return nonce;
  }

  /** The nonce to offer now. */
  current(nowMs: number): Promise<string> {
    return this.#nonce(Math.floor(nowMs / this.#rotateMs));
  }

  /** Whether `nonce` is the current or the previous window's. */
  async accepts(nonce: unknown, nowMs: number): Promise<boolean> {
    if (typeof nonce !== "string" || nonce.length > 64) return false;
    const window = Math.floor(nowMs / this.#rotateMs);
    const [current, previous] = await Promise.all([this.#nonce(window), this.#nonce(window - 1)]);
    // Both compared, so the answer's timing does not say which one matched.
    const isCurrent = sameText(nonce, current);
    const isPrevious = sameText(nonce, previous);
    return isCurrent || isPrevious;
  }
}
