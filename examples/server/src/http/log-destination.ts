import pino, { type Logger } from "pino";

/**
 * Log lines waiting for stdout are held up to this many bytes. When stdout is not read (a stuck log collector, a
 * full pipe) further lines are dropped and counted, not held: buffering them would let any client that makes the
 * server log (every request does) grow its memory without bound, and blocking on stdout would stop the server
 * answering at all. The count is logged once writing resumes.
 */
export const LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/** At exit the buffered lines get this long to reach a stdout nobody reads; then they are given up on. */
export const EXIT_FLUSH_MS = 2_000;

type SonicBoom = ReturnType<typeof pino.destination>;

/** Lines dropped for a full buffer, and how many of them a log line has reported so far. */
export interface DropCounter {
  dropped: number;
  reported: number;
}

/**
 * Stdout for the JSON log lines, written asynchronously with at most LOG_BUFFER_BYTES held (see there). Its
 * flush at exit is bounded by EXIT_FLUSH_MS, so a server whose stdout is stuck still exits when told to.
 */
export function boundedStdout(): { stream: SonicBoom; drops: DropCounter } {
  let flushDeadline: number | undefined;
  const stream = pino.destination({
    dest: 1,
    sync: false,
    maxLength: LOG_BUFFER_BYTES,
    // Asynchronous writes retry a full pipe every 100 ms for as long as it takes; the flush at exit only until its deadline.
    retryEAGAIN: () => flushDeadline === undefined || performance.now() < flushDeadline,
  });
  const drops: DropCounter = { dropped: 0, reported: 0 };
  stream.on("drop", () => {
    drops.dropped++;
  });
  const flushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    flushDeadline = performance.now() + EXIT_FLUSH_MS;
    try {
      flushSync();
    } catch {
      // Stdout is still not read: what is left is lost, as it would be with the process killed.
    } finally {
      flushDeadline = undefined;
    }
  };
  return { stream, drops };
}

/** Once stdout takes lines again, one warning says how many were dropped meanwhile. */
export function reportDrops(stream: SonicBoom, drops: DropCounter, logger: Logger): void {
  let scheduled = false;
  stream.on("write", () => {
    if (scheduled || drops.dropped === drops.reported) return;
    scheduled = true;
    // Not from inside the stream's write callback.
    setImmediate(() => {
      scheduled = false;
      const before = drops.dropped;
      const lines = before - drops.reported;
      if (lines === 0) return;
      logger.warn(
        { dropped_lines: lines },
        `${lines} log lines were dropped: stdout was not read and ${LOG_BUFFER_BYTES} bytes of lines were waiting (is the log collector stuck?)`,
      );
      // Dropped itself (the buffer is still full): the next write reports them all again.
      if (drops.dropped === before) drops.reported = before;
    });
  });
}
