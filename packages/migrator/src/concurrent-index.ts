import type postgres from "postgres";
import { IndexBuildError } from "./errors.js";
import { type IndexBuild, parseIndexBuild } from "./index-build.js";
import { abortableSleep, type RetryPolicy, retryDelayMs } from "./retry.js";
import type { MigratorEvent } from "./types.js";

type Connection = postgres.ISql;

export interface IndexBuildOptions {
  readonly retry: RetryPolicy;
  /** `statement_timeout` of each build (0: none); `lock_timeout` is 0 meanwhile, see `indexBuildTimeoutMs`. */
  readonly timeoutMs: number;
  readonly version: string;
  readonly log: (event: MigratorEvent) => void;
  /** Aborted: the build is not retried, and what it left is reported rather than dropped. */
  readonly signal?: AbortSignal | undefined;
}

// SQLSTATEs of a build that ran out of time: retried even when it had not created its index yet.
const LOCK_NOT_AVAILABLE = "55P03";
const QUERY_CANCELED = "57014";

interface Leftover {
  readonly name: string;
  /** Another backend is building it right now: not ours to drop. */
  readonly building: boolean;
}

/**
 * The INVALID indexes a build may have left: for `CREATE INDEX CONCURRENTLY name ON table`, `name` on that
 * table (whoever left it: the build wants that name; one on another table is not its to drop); for `REINDEX … CONCURRENTLY`, the `_ccnew`/`_ccold`
 * copies on the table. Being built by another backend (pg_stat_progress_create_index) is reported, not hidden.
 */
async function leftovers(sql: Connection, build: IndexBuild & { name: string }): Promise<Leftover[]> {
  const rows = await sql<{ name: string; building: boolean }[]>`
    select format('%I.%I', n.nspname, c.relname) as name,
      exists (select 1 from pg_catalog.pg_stat_progress_create_index p
              where p.index_relid = c.oid and p.pid <> pg_backend_pid()) as building
    from pg_catalog.pg_index i
    join pg_catalog.pg_class c on c.oid = i.indexrelid
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where not i.indisvalid and ${
      build.kind === "create"
        ? sql`c.relname = ${build.name} and i.indrelid = to_regclass(${build.table})`
        : sql`c.relname ~ '_cc(new|old)[0-9]*$' and i.indrelid = ${
            build.target === "table"
              ? sql`to_regclass(${build.name})`
              : sql`(select indrelid from pg_catalog.pg_index where indexrelid = to_regclass(${build.name}))`
          }`
    }
    order by c.relname`;
  return rows;
}

const describeBuild = (build: IndexBuild) =>
  build.kind === "create"
    ? `CREATE INDEX CONCURRENTLY ${build.name === null ? "(unnamed)" : build.name}`
    : `REINDEX ${build.target.toUpperCase()} CONCURRENTLY ${build.name}`;

const sqlState = (error: unknown) => (error as { code?: unknown } | null)?.code;

/**
 * Runs one concurrent index build under its own budget and cleans up after it: whatever INVALID index it
 * left is dropped with DROP INDEX CONCURRENTLY IF EXISTS and the statement is run again, up to
 * `retry.attempts` times. A build that "succeeds" but leaves its index INVALID (`IF NOT EXISTS` over an
 * earlier failed build) counts as failed. An unnamed index is built once and never dropped: PostgreSQL
 * picks its name, so nothing tells it apart from another session's.
 */
async function runIndexBuild(
  sql: Connection,
  build: IndexBuild,
  execute: () => Promise<unknown>,
  options: IndexBuildOptions,
): Promise<unknown> {
  // One budget for the build: the build's own waits for older transactions are lock waits, which a DDL
  // lock_timeout would cut short, leaving an INVALID index each time a long transaction is open.
  // The CTE is read before the outer select sets anything, so `saved` holds the session's own values.
  const [saved] = await sql<{ lock: string; statement: string }[]>`
    with saved as materialized (
      select current_setting('lock_timeout') as lock, current_setting('statement_timeout') as statement)
    select lock, statement, set_config('lock_timeout', '0', false),
      set_config('statement_timeout', ${String(options.timeoutMs)}, false)
    from saved`;
  try {
    if (build.kind === "create" && build.name === null) {
      try {
        return await execute();
      } catch (error) {
        throw new IndexBuildError({
          statement: describeBuild(build),
          attempts: 1,
          cause: error,
          cleanup:
            "the index is unnamed, so the migrator cannot tell which INVALID index it left; nothing was dropped (name the index)",
          left: [],
        });
      }
    }
    const named = build as IndexBuild & { name: string };
    // A REINDEX leftover is only this statement's if it was not there before it ran.
    const before =
      named.kind === "reindex"
        ? new Set((await leftovers(sql, named)).map((l) => l.name))
        : new Set<string>();
    for (let attempt = 1; ; attempt++) {
      let failure: unknown = null;
      let result: unknown;
      try {
        result = await execute();
      } catch (error) {
        failure = error;
      }
      const left = (await leftovers(sql, named)).filter((l) => !before.has(l.name));
      // Another session's build in progress on the table is not this statement's failure.
      if (failure === null && left.every((l) => l.building)) return result;
      const busy = left.filter((l) => l.building);
      const dropped: string[] = [];
      let dropFailure: unknown = null;
      for (const { name } of options.signal?.aborted ? [] : left.filter((l) => !l.building)) {
        try {
          await sql.unsafe(`drop index concurrently if exists ${name}`);
          dropped.push(name);
        } catch (error) {
          dropFailure = error;
          break;
        }
      }
      const cause = failure ?? new Error(`the build left ${left.map((l) => l.name).join(", ")} INVALID`);
      const retryable =
        dropped.length > 0 ||
        sqlState(failure) === LOCK_NOT_AVAILABLE ||
        sqlState(failure) === QUERY_CANCELED;
      if (
        dropFailure === null &&
        busy.length === 0 &&
        retryable &&
        attempt < options.retry.attempts &&
        !options.signal?.aborted
      ) {
        const delayMs = retryDelayMs(options.retry, attempt);
        options.log({
          level: "warn",
          event: "index_build_retry",
          version: options.version,
          statement: describeBuild(build),
          attempt,
          attempts: options.retry.attempts,
          delayMs,
          dropped,
          message: cause instanceof Error ? cause.message : String(cause),
        });
        await abortableSleep(delayMs, options.signal);
        continue;
      }
      const notDropped = left.map((l) => l.name).filter((name) => !dropped.includes(name));
      const notes: string[] = [];
      if (dropped.length > 0) notes.push(`the INVALID index it left (${dropped.join(", ")}) was dropped`);
      if (busy.length > 0) {
        notes.push(
          `${busy.map((l) => l.name).join(", ")} is being built by another session and was left alone`,
        );
      }
      if (dropFailure !== null) {
        const reason = dropFailure instanceof Error ? dropFailure.message : String(dropFailure);
        notes.push(
          `${notDropped.filter((n) => !busy.some((b) => b.name === n)).join(", ")} could not be dropped (${reason}): run DROP INDEX CONCURRENTLY IF EXISTS on it`,
        );
      }
      if (options.signal?.aborted && notDropped.length > 0) {
        notes.push(
          `the run was stopped: ${notDropped.join(", ")} was left INVALID; run DROP INDEX CONCURRENTLY IF EXISTS on it`,
        );
      }
      if (left.length === 0) notes.push("it left no INVALID index");
      throw new IndexBuildError({
        statement: describeBuild(build),
        attempts: attempt,
        cause,
        cleanup: notes.join("; "),
        left: notDropped,
      });
    }
  } finally {
    await sql`select set_config('lock_timeout', ${saved?.lock ?? "0"}, false),
      set_config('statement_timeout', ${saved?.statement ?? "0"}, false)`.catch(() => {});
  }
}

/**
 * The connection a `transaction: false` migration sees: the run's own, except that a concurrent index
 * build (a tagged template or `unsafe` whose text starts with one) runs through `runIndexBuild`. Such a
 * statement gives back a plain promise (await it; `.simple()`, `.cursor()` and the like are not for it);
 * every other statement is the untouched postgres.js query.
 */
export function withIndexBuilds(sql: Connection, options: IndexBuildOptions): Connection {
  const intercept = (text: unknown, execute: () => Promise<unknown>) => {
    const build = typeof text === "string" ? parseIndexBuild(text) : null;
    return build ? runIndexBuild(sql, build, execute, options) : execute();
  };
  return new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      const [strings] = args;
      const text = Array.isArray(strings) && "raw" in strings ? strings.join("$?") : null;
      if (text === null || parseIndexBuild(text) === null) return Reflect.apply(target, thisArg, args);
      return intercept(text, () => Reflect.apply(target, thisArg, args));
    },
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (key !== "unsafe" || typeof value !== "function") return value;
      return (text: unknown, ...rest: unknown[]) =>
        typeof text === "string" && parseIndexBuild(text) !== null
          ? intercept(text, () => value.call(target, text, ...rest))
          : value.call(target, text, ...rest);
    },
  });
}
