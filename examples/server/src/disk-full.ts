import { statfsSync } from "node:fs";

/**
 * WASI's ENOSPC: PGlite's file system (Emscripten) throws `ErrnoError { errno: 51 }`, an object that is not an
 * Error and has no message, when the disk under the data directory is full.
 */
const WASI_ENOSPC = 51;

/**
 * Whether `error` says the disk is full, in any of the forms it reaches the server: Node's `ENOSPC`, PostgreSQL's
 * SQLSTATE 53100 (`disk_full`, also PGlite's), or the Emscripten file system's errno.
 */
export function isNoSpace(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, errno, name, message } = error as Record<string, unknown>;
  if (code === "ENOSPC" || code === "53100") return true;
  if (name === "ErrnoError" && errno === WASI_ENOSPC) return true;
  return typeof message === "string" && /no space left on device/i.test(message);
}

/** The operator's line for a full disk under the embedded database: the cause, the directory, the fix. */
export function noSpaceMessage(dataDir: string): string {
  return `No space left on the device holding PLATFORM_DATA_DIR (${dataDir}): free space on it, or set PLATFORM_DATA_DIR to a directory on a disk with room (or DATABASE_URL to use PostgreSQL)`;
}

/**
 * Free space under which the embedded database takes no more statements: four WAL segments (16 MiB each). PGlite
 * that fails to write its WAL for lack of space does not fail the statement and recover as PostgreSQL's restart
 * would: it spins on the next statement, which blocks the whole process (no answer, no log line, no recovery once
 * space is freed). Refusing before the disk is full keeps the process answering, and storing resumes by itself.
 */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

/** How often free space is looked up at most; between lookups the last answer stands. */
const CHECK_EVERY_MS = 250;

/** The embedded database refused a statement: too little space left under its data directory. */
export class DataDirFullError extends Error {
  /** PostgreSQL's `disk_full`, the SQLSTATE of the same refusal by a database. */
  readonly code = "53100";
  constructor(message: string) {
    super(message);
    this.name = "DataDirFullError";
  }
}

interface Logger {
  error(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * `check()` throws DataDirFullError while the device holding `dataDir` has less than `minFreeBytes` available
 * (or cannot be looked up: fail closed), and logs one line when that starts, naming the directory, and one when
 * it ends.
 */
export class DiskSpaceGuard {
  private checkedAt = Number.NEGATIVE_INFINITY;
  private refusal: DataDirFullError | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger,
    private readonly minFreeBytes = MIN_FREE_BYTES,
    private readonly statfs: (path: string) => { bavail: number; bsize: number } = statfsSync,
  ) {}

  check(): void {
    const now = performance.now();
    if (now - this.checkedAt >= CHECK_EVERY_MS) {
      this.checkedAt = now;
      this.update();
    }
    if (this.refusal !== undefined) throw this.refusal;
  }

  private update(): void {
    let freeBytes: number;
    let cause: string;
    try {
      const stats = this.statfs(this.dataDir);
      freeBytes = stats.bavail * stats.bsize;
      cause = `${Math.floor(freeBytes / 1024 / 1024)} MiB free`;
    } catch (error) {
      freeBytes = 0;
      cause = `free space unknown: ${error instanceof Error ? error.message : String(error)}`;
    }
    const wasRefusing = this.refusal !== undefined;
    if (freeBytes >= this.minFreeBytes) {
      this.refusal = undefined;
      if (wasRefusing) {
        this.logger.info(
          { data_dir: this.dataDir, free_bytes: freeBytes },
          `Space freed on the device holding PLATFORM_DATA_DIR (${this.dataDir}): the embedded database takes statements again`,
        );
      }
      return;
    }
    this.refusal = new DataDirFullError(
      `No space left on the device holding PLATFORM_DATA_DIR (${this.dataDir}) (${cause}, under the ${this.minFreeBytes / 1024 / 1024} MiB the embedded database needs): it refuses statements, and deliveries get 503, until space is freed there`,
    );
    if (!wasRefusing)
      this.logger.error({ data_dir: this.dataDir, free_bytes: freeBytes }, this.refusal.message);
  }
}
