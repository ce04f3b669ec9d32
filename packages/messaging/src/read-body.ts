import type { IncomingMessage } from "node:http";
import type { BodyCharge } from "./body-budget.js";
import { BodiesBusyError, BodyTimeoutError, PayloadTooLargeError, RequestAbortedError } from "./errors.js";

/** How one request body is read: its size cap, its deadlines, and what it holds of the process's body budget. */
export interface BodyReadLimits {
  maxBytes: number;
  /** The whole body must arrive within this, counted from the start of the read. */
  timeoutMs: number;
  /** The longest gap between two pieces of the body. */
  idleTimeoutMs: number;
  /** Charged with the body's bytes (its declared length up front); the caller releases it. */
  charge: BodyCharge;
}

/**
 * The request body as bytes, at most `limits.maxBytes` of them, under the deadlines of `limits` and charged to
 * its budget. A declared Content-Length over the limit (PayloadTooLargeError) or over what the budget has left
 * (BodiesBusyError) is refused before reading; otherwise reading stops as soon as a limit is passed, so an
 * oversized or stalled body is never buffered past it. A body late by a deadline throws BodyTimeoutError, and on
 * Node its connection is closed shortly after (the 408 goes out first when the client reads it).
 *
 * On @hono/node-server, pass the Node request (`c.env.incoming`): touching `request.body` there makes the
 * adapter build a full WHATWG `Request` and a web stream over the socket (bench/notes/profiles.md). Elsewhere
 * the web stream of `request` is read.
 */
export function readRawBody(
  request: Request,
  limits: BodyReadLimits,
  incoming?: IncomingMessage,
): Promise<Uint8Array> {
  const declared = declaredLength(
    incoming?.headers["content-length"] ?? request.headers.get("content-length"),
  );
  if (declared !== undefined) {
    if (declared > limits.maxBytes) return Promise.reject(new PayloadTooLargeError(limits.maxBytes));
    if (!limits.charge.grow(declared)) return Promise.reject(new BodiesBusyError(limits.charge.budgetBytes));
  }
  const chunked = declared === undefined;
  // Read from Node only while nothing else has started to (the adapter's web stream reads the same socket).
  if (incoming !== undefined && !incoming.readableDidRead) return readIncomingBody(incoming, limits, chunked);
  return readWebBody(request, limits, chunked);
}

function declaredLength(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  // Node's parser has already refused a Content-Length that is not a number; elsewhere an invalid one is refused.
  const length = Number(value);
  return Number.isSafeInteger(length) && length >= 0 ? length : Number.POSITIVE_INFINITY;
}

/** The two deadlines of one read: `onLate` gets the one that passed first. */
class Deadlines {
  private readonly total: NodeJS.Timeout;
  private idle: NodeJS.Timeout;

  constructor(
    private readonly limits: BodyReadLimits,
    private readonly onLate: (error: BodyTimeoutError) => void,
  ) {
    this.total = setTimeout(() => onLate(new BodyTimeoutError("total", limits.timeoutMs)), limits.timeoutMs);
    this.idle = this.idleTimer();
  }

  private idleTimer(): NodeJS.Timeout {
    const { idleTimeoutMs } = this.limits;
    return setTimeout(() => this.onLate(new BodyTimeoutError("idle", idleTimeoutMs)), idleTimeoutMs);
  }

  /** A piece arrived: the idle limit starts again. */
  progress(): void {
    clearTimeout(this.idle);
    this.idle = this.idleTimer();
  }

  clear(): void {
    clearTimeout(this.total);
    clearTimeout(this.idle);
  }
}

/** After a 408 the connection is closed even if the client never reads the answer (or the adapter waits to drain). */
const CLOSE_AFTER_TIMEOUT_MS = 1_000;

function readIncomingBody(
  incoming: IncomingMessage,
  limits: BodyReadLimits,
  chunked: boolean,
): Promise<Uint8Array> {
  const { maxBytes, charge } = limits;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const detach = () => {
      deadlines.clear();
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    // Stop pulling from the socket but keep it open for the answer; the adapter drains (discards) the rest of
    // the body once the response is written.
    const stop = (error: Error) => {
      detach();
      incoming.pause();
      reject(error);
    };
    const deadlines = new Deadlines(limits, (error) => {
      stop(error);
      // A stalled client would hold the socket (and the adapter's drain) until Node's own request timeout.
      setTimeout(() => incoming.destroy(), CLOSE_AFTER_TIMEOUT_MS).unref();
    });
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > maxBytes) return stop(new PayloadTooLargeError(maxBytes));
      if (chunked && !charge.grow(chunk.byteLength)) {
        stop(new BodiesBusyError(charge.budgetBytes));
        // What the client still sends is not wanted: close instead of draining it.
        setTimeout(() => incoming.destroy(), CLOSE_AFTER_TIMEOUT_MS).unref();
        return;
      }
      deadlines.progress();
      chunks.push(chunk);
    };
    const onEnd = () => {
      detach();
      resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, total));
    };
    const onError = (error: Error) => {
      detach();
      reject(new RequestAbortedError({ cause: error }));
    };
    // An aborted request may close without an error; 'end' comes before 'close' for a complete body.
    const onClose = () => {
      detach();
      reject(new RequestAbortedError());
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}

/** A request's web stream, under the same limits; the stream is cancelled at the first one passed. */
async function readWebBody(message: Request, limits: BodyReadLimits, chunked: boolean): Promise<Uint8Array> {
  if (message.body === null) return new Uint8Array(0);
  const { maxBytes, charge } = limits;
  const reader = message.body.getReader();
  let late: ((error: BodyTimeoutError) => void) | undefined;
  const lateness = new Promise<never>((_, reject) => {
    late = reject;
  });
  const deadlines = new Deadlines(limits, (error) => late?.(error));
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), lateness]);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new PayloadTooLargeError(maxBytes);
      if (chunked && !charge.grow(value.byteLength)) throw new BodiesBusyError(charge.budgetBytes);
      deadlines.progress();
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    deadlines.clear();
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
