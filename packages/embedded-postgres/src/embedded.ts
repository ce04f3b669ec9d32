import { mkdirSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { lockDataDir } from "./data-dir-lock.js";
import { InProcessWire } from "./in-process-wire.js";

export { DataDirLockedError } from "./data-dir-lock.js";

/** Where embedded PostgreSQL keeps its data. */
export interface EmbeddedPostgresOptions {
  /** Directory PGlite persists to; created if missing. One process at a time. */
  readonly dataDir: string;
  /**
   * Called before each write of the client to PGlite; a throw refuses it: the client's connection fails (its
   * statements reject) and postgres.js reconnects for the next statement. A server uses
   * it to stop writing before the disk is full: PGlite that fails to write its WAL hangs the process.
   */
  readonly guard?: () => void;
}

/** Embedded PostgreSQL (PGlite) in this process, from `startEmbeddedPostgres`, owning its data directory. */
export interface EmbeddedPostgres {
  /**
   * postgres.js connected to PGlite inside this process (no socket), with a pool of one connection: PGlite
   * has a single session, and two connections would share it.
   */
  readonly sql: postgres.Sql;
  /** Closes the client and PGlite, and releases the data directory. Idempotent. */
  stop(): Promise<void>;
}

/** The lock directory inside the data directory (see data-dir-lock.ts); the lock file of earlier versions. */
const LOCK_DIR = "agent-platform-embedded.lock";

/**
 * PGlite persisted to `dataDir`, with a postgres.js client that reaches it inside this process. There is
 * deliberately no socket: PGlite has no authentication, so anything listening (even on loopback) would let
 * every local process in as superuser and let it take the single session away from the application.
 * PGlite must never be opened by two processes, hence the lock.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  // Keyed by the real path, so a second path to the same directory (a symlink) meets the same lock.
  const releaseDir = lockDataDir(join(realpathSync(dataDir), LOCK_DIR), dataDir);
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
    socket: () => new InProcessWire(db, options.guard),
    // Reconnecting after a refused connection (see `guard`) costs nothing: within half a second, not postgres.js's
    // default of up to 20 s, so statements go through again once the guard lets them.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
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
