/**
 * The memory the webhooks' request bodies may hold together, in one process: an anonymous client that opens
 * many connections and never finishes its bodies gets refusals, not the server's memory.
 *
 * A body is charged its declared Content-Length before a byte is read (a chunked one is charged as its bytes
 * arrive) and released once its delivery has been answered. Large bodies (over SMALL_BODY_BYTES) share only
 * LARGE_SHARE of the budget: the rest stays for the few-KiB deliveries chat products send, so a flood of large
 * stalled bodies does not lock out the deliveries that arrive meanwhile.
 */

/** A body up to this size is a small one (chat deliveries are a few KiB). */
export const SMALL_BODY_BYTES = 64 * 1024;

/** The part of the budget large bodies may hold together. */
const LARGE_SHARE = 0.75;

/** The budget of one `createMessaging`: every webhook request's body draws from it. */
export class BodyBudget {
  private held = 0;
  private largeHeld = 0;
  private readonly largeLimit: number;

  constructor(readonly totalBytes: number) {
    this.largeLimit = Math.floor(totalBytes * LARGE_SHARE);
  }

  /** Bytes charged to bodies being read or handled right now. */
  get heldBytes(): number {
    return this.held;
  }

  /** A charge for one request's body, empty until it grows; release it when the request is answered. */
  open(): BodyCharge {
    return new BodyCharge(this);
  }

  /** @internal Charges `bytes` more to `charge`; false (nothing charged) when the budget cannot hold them. */
  take(charge: BodyCharge, bytes: number): boolean {
    const after = charge.bytes + bytes;
    const largeAfter = after > SMALL_BODY_BYTES ? after : 0;
    const largeBefore = charge.bytes > SMALL_BODY_BYTES ? charge.bytes : 0;
    if (this.held + bytes > this.totalBytes) return false;
    if (this.largeHeld - largeBefore + largeAfter > this.largeLimit) return false;
    this.held += bytes;
    this.largeHeld += largeAfter - largeBefore;
    return true;
  }

  /** @internal Returns everything `charge` holds. */
  give(charge: BodyCharge): void {
    this.held -= charge.bytes;
    if (charge.bytes > SMALL_BODY_BYTES) this.largeHeld -= charge.bytes;
  }
}

/** What one request's body holds of the budget. */
export class BodyCharge {
  bytes = 0;
  private released = false;

  constructor(private readonly budget: BodyBudget) {}

  /** The whole budget this charge draws from, for the refusal's message. */
  get budgetBytes(): number {
    return this.budget.totalBytes;
  }

  /** Charges `bytes` more; false when the budget cannot hold them (nothing is charged then). */
  grow(bytes: number): boolean {
    if (this.released || !this.budget.take(this, bytes)) return false;
    this.bytes += bytes;
    return true;
  }

  /** Returns what this request held; later calls do nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this);
    this.bytes = 0;
  }
}
