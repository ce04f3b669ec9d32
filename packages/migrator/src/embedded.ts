import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { InProcessWire } from "./in-process-wire.js";

/** Another live process (or this one) already has the data directory open. */
export class DataDirLockedError extends Error {
  readonly code = "DATA_DIR_LOCKED";
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The embedded PostgreSQL data directory ${dataDir} is already in use by process ${pid}${pid === process.pid ? " (this process)" : ""}; stop it or use another data directory`,
    );
    this.name = "DataDirLockedError";
  }
}

export interface EmbeddedPostgresOptions {
  /** Directory PGlite persists to; created if missing. One process at a time. */
  readonly dataDir: string;
}

export interface EmbeddedPostgres {
  /**
   * postgres.js connected to PGlite inside this process (no socket), with a pool of one connection: PGlite
   * has a single session, and two connections would share it.
   */
  readonly sql: postgres.Sql;
  /** Closes the client and PGlite, and releases the data directory. Idempotent. */
  stop(): Promise<void>;
}

const LOCK_FILE = "agent-platform-embedded.lock";

/**
 * PGlite persisted to `dataDir`, with a postgres.js client that reaches it inside this process. There is
 * deliberately no socket: PGlite has no authentication, so anything listening (even on loopback) would let
 * every local process in as superuser and let it take the single session away from the application.
 * PGlite must never be opened by two processes, hence the lock file.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const releaseDir = lockDataDir(join(dataDir, LOCK_FILE), dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir);
  } catch (error) {
    releaseDir();
    throw error;
  }
  // `socket` is a documented postgres.js option that its type declarations lack.
  const clientOptions: NonNullable<Parameters<typeof postgres>[1]> & { socket: () => InProcessWire } = {
    max: 1,
    socket: () => new InProcessWire(db),
    // The role and database PGlite's initdb creates (postgres.js would default to the OS user's name).
    user: "postgres",
    database: "postgres",
    onnotice: () => {},
  };
  const sql = postgres(clientOptions);
  let stopping: Promise<void> | undefined;
  return {
    sql,
    stop() {
      stopping ??= (async () => {
        // Each step runs even if an earlier one failed; the first failure is reported.
        const results = await Promise.allSettled([sql.end({ timeout: 5 })]);
        results.push(...(await Promise.allSettled([db.close()])));
        releaseDir();
        const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
        if (failed) throw failed.reason;
      })();
      return stopping;
    },
  };
}

// Data directories this process has open. A lock file naming this process's pid but not listed here was
// left by an earlier process that had the same pid (typical of a restarted container, where the app is pid 1).
const openedHere = new Set<string>();

/** Creates the lock file exclusively; a file left by a process that no longer exists is taken over. */
function lockDataDir(path: string, dataDir: string): () => void {
  if (openedHere.has(dataDir)) throw new DataDirLockedError(dataDir, process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      openedHere.add(dataDir);
      return () => {
        openedHere.delete(dataDir);
        try {
          unlinkSync(path);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = Number.parseInt(readFileSync(path, "utf8"), 10);
      const live = Number.isSafeInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner);
      if (live) throw new DataDirLockedError(dataDir, owner);
      unlinkSync(path);
    }
  }
  throw new DataDirLockedError(dataDir, Number.NaN);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
