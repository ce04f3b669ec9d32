import { configError } from "@agent-platform/common/internal";
import type { ReplayStore } from "./options.js";

/**
 * Runs one parameterised statement and returns its rows. postgres.js: `(text, params) => sql.unsafe(text, params)`;
 * pg: `async (text, params) => (await pool.query(text, params)).rows`; PGlite: the same with `db.query`.
 */
export type SqlQuery = (text: string, params: readonly unknown[]) => Promise<readonly unknown[]>;

/** Where `PostgresReplayStore` keeps the proofs' `jti`s: a query function of your PostgreSQL client and a table. */
export interface PostgresReplayStoreOptions {
  readonly query: SqlQuery;
  /** Table name, optionally schema-qualified. Default `jwt_rbac_dpop_replay`; created if missing. */
  readonly table?: string;
  /** Least time between two purges of expired rows, in ms. Default 60000. */
  readonly purgeEveryMs?: number;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}(\.[a-z_][a-z0-9_]{0,62})?$/;
// 42P07: the table exists; 23505: a concurrent CREATE won the race for the type name.
const CREATED_BY_ANOTHER = new Set(["42P07", "23505"]);

/**
 * The replay store replicas share (RFC 9449 §11.1): one row per used proof, inserted with
 * `ON CONFLICT DO NOTHING`, so of two replicas given the same proof exactly one inserts it. Expired rows
 * are deleted at most once per `purgeEveryMs`, in the background of an insert.
 */
export class PostgresReplayStore implements ReplayStore {
  readonly #query: SqlQuery;
  readonly #table: string;
  readonly #purgeEveryMs: number;
  #ready: Promise<void> | undefined;
  #lastPurge = 0;

  constructor(options: PostgresReplayStoreOptions) {
    if (typeof options?.query !== "function") {
      throw configError("jwt-rbac", "PostgresReplayStore needs query(text, params) => Promise<rows>");
    }
    const table = options.table ?? "jwt_rbac_dpop_replay";
    if (!IDENTIFIER.test(table)) {
      throw configError(
        "jwt-rbac",
        `PostgresReplayStore table "${table}" must be a lower-case [schema.]name`,
      );
    }
    this.#query = options.query;
    this.#table = table;
    this.#purgeEveryMs = options.purgeEveryMs ?? 60_000;
  }

  /** Creates the table if it is missing; safe to race from several processes. */
  ready(): Promise<void> {
    this.#ready ??= this.#query(
      `CREATE TABLE IF NOT EXISTS ${this.#table} (key text PRIMARY KEY, expires_at bigint NOT NULL)`,
      [],
    ).then(
      () => undefined,
      (error: unknown) => {
        if (CREATED_BY_ANOTHER.has((error as { code?: string }).code ?? "")) return;
        this.#ready = undefined;
        throw error;
      },
    );
    return this.#ready;
  }

  async add(key: string, expiresAtMs: number): Promise<boolean> {
    await this.ready();
    const rows = await this.#query(
      `INSERT INTO ${this.#table} (key, expires_at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING 1`,
      [key, Math.ceil(expiresAtMs)],
    );
    const now = Date.now();
    if (now - this.#lastPurge >= this.#purgeEveryMs) {
      this.#lastPurge = now;
      // Not awaited: a slow purge delays no request; a failed one is retried at the next period.
      this.#query(`DELETE FROM ${this.#table} WHERE expires_at < $1`, [now]).catch(() => undefined);
    }
    return rows.length === 1;
  }
}
