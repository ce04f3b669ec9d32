import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import postgres from "postgres";

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
  /**
   * How many clients the socket server admits at once (default 1: the returned `sql`). Raise it to let
   * another client (psql, a child process) use `url` alongside; all clients share PGlite's one session.
   */
  readonly maxConnections?: number;
}

export interface EmbeddedPostgres {
  /** postgres.js with a pool of one connection, like every client of this single-session database should. */
  readonly sql: postgres.Sql;
  /** `postgres://` address of the socket server on a free loopback port (see `maxConnections`). */
  readonly url: string;
  /** Closes the client, the socket server and PGlite, and releases the data directory. Idempotent. */
  stop(): Promise<void>;
}

const LOCK_FILE = "agent-platform-embedded.lock";

/**
 * PGlite persisted to `dataDir`, served over the PostgreSQL wire protocol on 127.0.0.1, with a postgres.js
 * client. PGlite has a single backend session: it must never be opened by two processes, hence the lock
 * file, and its clients share that session (advisory locks do not exclude one another).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const releaseDir = lockDataDir(join(dataDir, LOCK_FILE), dataDir);
  let db: PGlite | undefined;
  let server: PGLiteSocketServer | undefined;
  try {
    db = await PGlite.create(dataDir);
    server = new PGLiteSocketServer({
      db,
      host: "127.0.0.1",
      port: 0,
      maxConnections: options.maxConnections ?? 1,
    });
    await server.start();
  } catch (error) {
    await server?.stop().catch(() => {});
    await db?.close().catch(() => {});
    releaseDir();
    throw error;
  }
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const started = { db, server };
  let stopping: Promise<void> | undefined;
  return {
    sql,
    url,
    stop() {
      stopping ??= (async () => {
        // Each step runs even if an earlier one failed; the first failure is reported.
        const results = await Promise.allSettled([sql.end({ timeout: 5 }), started.server.stop()]);
        results.push(...(await Promise.allSettled([started.db.close()])));
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
