import { join } from "node:path";
import { createMigrator, type MigrateOptions, type Migration, type Migrator } from "@agent-platform/migrator";
import type { Logger } from "pino";
import postgres, { type Sql } from "postgres";
import type { ServerConfig } from "./config.js";
import { DiskSpaceGuard, isNoSpace, noSpaceMessage } from "./disk-full.js";
import { StartupError } from "./startup-error.js";

/** A registered database: its pool, its migrator over the platform schema, and how to close it. */
export interface RegisteredDatabase {
  readonly id: string;
  readonly sql: Sql;
  readonly migrator: Migrator;
  readonly embedded: boolean;
  close(): Promise<void>;
}

export const EMBEDDED_DATABASE_ID = "default";
const POOL_SIZE = 10;
const CONNECT_TIMEOUT_S = 10;
const CLOSE_TIMEOUT_S = 5;

/**
 * Seconds before reconnecting after a connection failed: short and flat. postgres.js's default grows as 3^n / 100
 * up to 20 s, and a statement waits for it, so a database that was down for 5 s stayed refused for 13 s more
 * once it answered again. A connection attempt to a database that is down costs little (it is refused at once).
 */
export function reconnectBackoffS(retries: number): number {
  return Math.min(0.05 * 2 ** retries, 0.5) * (0.5 + Math.random() / 2);
}

function connect(url: string): Sql {
  return postgres(url, {
    max: POOL_SIZE,
    connect_timeout: CONNECT_TIMEOUT_S,
    backoff: reconnectBackoffS,
    idle_timeout: 60,
    // NOTICEs (e.g. "relation already exists, skipping") are not errors; postgres.js prints them by default.
    onnotice: () => {},
  });
}

/**
 * A migrator whose runs all stop when `stopping` is aborted (the running statement cancelled, its
 * transaction rolled back, the lock released), and which can wait for the runs in progress.
 */
function stoppableMigrator(migrator: Migrator, stopping: AbortSignal) {
  const runs = new Set<Promise<unknown>>();
  return {
    migrator: {
      status: () => migrator.status(),
      migrate: (options: MigrateOptions = {}) => {
        const run = migrator.migrate({ ...options, signal: stopping });
        runs.add(run);
        const forget = () => runs.delete(run);
        run.then(forget, forget);
        return run;
      },
    } satisfies Migrator,
    settled: () => Promise.allSettled([...runs]),
  };
}

/**
 * Opens every configured database, or one embedded PostgreSQL (PGlite) with id `default` when none is
 * configured. Connections are lazy: a database that is down does not stop the server; /health names it.
 * Aborting `stopping` stops the migrations in progress; `close()` waits for them before closing the pool.
 */
export async function openDatabases(
  config: ServerConfig,
  migrations: readonly Migration[],
  logger: Logger,
  stopping: AbortSignal,
): Promise<RegisteredDatabase[]> {
  const register = (id: string, sql: Sql, embedded: boolean, close: () => Promise<void>) => {
    const { migrator, settled } = stoppableMigrator(
      createMigrator({ sql, migrations, retry: config.migrateRetry, logger: logger.child({ db_id: id }) }),
      stopping,
    );
    return {
      id,
      sql,
      embedded,
      migrator,
      close: async () => {
        // A migration stopped by `stopping` releases its lock on this pool: wait for it before ending the pool.
        await settled();
        await close();
      },
    };
  };

  if (config.databases.length === 0) {
    // Loaded only here, so a server on real PostgreSQL never loads PGlite's WebAssembly.
    const { DataDirLockedError, startEmbeddedPostgres } = await import("@agent-platform/embedded-postgres");
    const dataDir = join(config.dataDir, EMBEDDED_DATABASE_ID);
    const diskSpace = new DiskSpaceGuard(config.dataDir, logger.child({ db_id: EMBEDDED_DATABASE_ID }));
    const guard = () => diskSpace.check();
    const embedded = await startEmbeddedPostgres({ dataDir, guard }).catch((error: unknown) => {
      if (isNoSpace(error)) throw new StartupError("DATA_DIR_FULL", noSpaceMessage(config.dataDir));
      if (!(error instanceof DataDirLockedError)) throw error;
      throw new StartupError(
        "DATA_DIR_LOCKED",
        `The embedded database ${dataDir} is in use by process ${error.pid}: stop that server, or set PLATFORM_DATA_DIR to another directory (or DATABASE_URL to use PostgreSQL)`,
      );
    });
    logger.info(
      { db_id: EMBEDDED_DATABASE_ID, data_dir: dataDir },
      `No DATABASE_URL or DATABASES set: using embedded PostgreSQL (PGlite) persisted in ${dataDir} as database '${EMBEDDED_DATABASE_ID}'`,
    );
    return [register(EMBEDDED_DATABASE_ID, embedded.sql, true, () => embedded.stop())];
  }

  return config.databases.map((database) => {
    const sql = connect(database.url);
    return register(database.id, sql, false, () => sql.end({ timeout: CLOSE_TIMEOUT_S }));
  });
}

/** Ids of the databases that do not answer `SELECT 1` within `timeoutMs`. */
export async function unreachableDatabases(
  databases: readonly RegisteredDatabase[],
  timeoutMs: number,
): Promise<string[]> {
  const results = await Promise.all(
    databases.map(async (database) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timed out")), timeoutMs);
      });
      try {
        await Promise.race([database.sql`SELECT 1`, timeout]);
        return undefined;
      } catch {
        return database.id;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return results.filter((id) => id !== undefined);
}
