import { Duplex } from "node:stream";
import type { PGlite } from "@electric-sql/pglite";

// Wire-protocol codes of the length-prefixed messages a client sends before its startup packet is done.
const PROTOCOL_3 = 196_608;
const SSL_REQUEST = 80_877_103;
const CANCEL_REQUEST = 80_877_102;
const TERMINATE = 0x58; // 'X'
// PostgreSQL refuses messages over 1 GB; a length beyond it means the stream is corrupt, not a big query.
const MAX_MESSAGE_BYTES = 0x3fff_ffff;

/**
 * A socket-shaped stream that carries one postgres.js connection to PGlite inside this process: what the
 * client writes is cut into wire-protocol messages and executed by PGlite in order, and PGlite's answers are
 * read back. Nothing listens on a port or a file, so no other process can reach the database.
 *
 * postgres.js treats a custom socket as already connected and closes it with `readyState === "open"` +
 * `end(Terminate)`, so that is the surface provided here.
 */
export class InProcessWire extends Duplex {
  private pending: Buffer = Buffer.alloc(0);
  private startupDone = false;
  // Messages run one after another; each write waits for its messages, which is the backpressure.
  private queue: Promise<void> = Promise.resolve();

  /** `guard` runs before each write is executed; a throw fails the write, and so the connection. */
  constructor(
    private readonly db: PGlite,
    private readonly guard: () => void = () => {},
  ) {
    super();
  }

  get readyState(): "open" | "closed" {
    return this.destroyed || this.writableEnded ? "closed" : "open";
  }

  override _read(): void {
    // Answers are pushed as PGlite produces them.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let messages: Buffer[];
    try {
      this.guard();
      messages = this.takeMessages();
    } catch (error) {
      callback(error as Error);
      return;
    }
    this.queue = this.queue.then(() => this.run(messages));
    this.queue.then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.queue = this.queue.then(() => this.release());
    this.queue.then(
      () => {
        this.push(null);
        callback();
      },
      (error: Error) => callback(error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A connection dropped mid-transaction must not leave PGlite's single session inside it for the next one.
    this.queue
      .then(() => this.release())
      .then(
        () => callback(error),
        (releaseError: Error) => callback(error ?? releaseError),
      );
  }

  /** Complete messages at the front of `pending`; the rest stays buffered. */
  private takeMessages(): Buffer[] {
    const messages: Buffer[] = [];
    for (;;) {
      const headerBytes = this.startupDone ? 5 : 8;
      if (this.pending.length < headerBytes) return messages;
      const length = this.startupDone ? 1 + this.pending.readInt32BE(1) : this.pending.readInt32BE(0);
      if (length < headerBytes - (this.startupDone ? 1 : 0) || length > MAX_MESSAGE_BYTES) {
        throw new Error(`invalid PostgreSQL wire message length ${length}`);
      }
      if (this.pending.length < length) return messages;
      const message = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      if (!this.startupDone) {
        const code = message.readInt32BE(4);
        if (code === SSL_REQUEST) {
          this.push(Buffer.from("N")); // no TLS: there is no network to protect
          continue;
        }
        // A cancel request cannot interrupt PGlite, which runs one statement at a time in this thread.
        if (code === CANCEL_REQUEST) throw new Error("PGlite cannot cancel a running query");
        if (code !== PROTOCOL_3) throw new Error(`unsupported PostgreSQL protocol ${code}`);
        this.startupDone = true;
      } else if (message[0] === TERMINATE) {
        continue; // the connection ends with the stream; PGlite's session lives on for the next one
      }
      messages.push(message);
    }
  }

  private async run(messages: Buffer[]): Promise<void> {
    for (const message of messages) {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(new Uint8Array(message), {
          onRawData: (data) => {
            this.push(Buffer.from(data));
          },
        }),
      );
    }
  }

  private async release(): Promise<void> {
    if (this.db.closed || !this.db.isInTransaction()) return;
    await this.db.exec("ROLLBACK"); // takes PGlite's query mutex itself
  }
}
