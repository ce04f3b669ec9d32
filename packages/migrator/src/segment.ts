import { inSpan } from "@agent-platform/common/internal";
import type postgres from "postgres";
import { MigrationError, type RunnableMigration, Umzug, type UmzugStorage } from "umzug";
import { withIndexBuilds } from "./concurrent-index.js";
import {
  allowNullChecksums,
  createHistory,
  type HistoryRow,
  type HistoryTable,
  writeHistory,
} from "./history.js";
import type { CheckedMigration } from "./migration-list.js";
import type { RetryPolicy } from "./retry.js";
import { MIGRATION_SPAN, migratorTracer } from "./tracing.js";
import type { MigrationDirection, MigratorEvent } from "./types.js";

type Connection = postgres.ISql;

/**
 * The unit a run commits and retries: consecutive transactional migrations in one transaction, or one
 * `transaction: false` migration alone. Its history rows are written in the same transaction, so a
 * rollback takes them with it and running the segment again starts from what the database says.
 */
export interface Segment {
  readonly steps: readonly CheckedMigration[];
  readonly versions: readonly string[];
  readonly transactional: boolean;
}

/** Cuts a plan's steps into segments: consecutive transactional steps share one, the others stand alone. */
export function segmentsOf(steps: readonly CheckedMigration[]): Segment[] {
  const groups: CheckedMigration[][] = [];
  for (const step of steps) {
    const last = groups[groups.length - 1];
    if (step.transactional && last?.[0]?.transactional) last.push(step);
    else groups.push([step]);
  }
  return groups.map((group) => ({
    steps: group,
    versions: group.map((e) => e.version.text),
    transactional: group[0]?.transactional === true,
  }));
}

/** What umzug hands each migration and the storage: the segment's connection and what it wrote. */
interface SegmentContext {
  readonly sql: Connection;
  readonly inserted: HistoryRow[];
  readonly deleted: string[];
  readonly started: Map<string, number>;
  /** The history table was created by this attempt: it has no rows yet, nothing to read. */
  created: boolean;
}

/**
 * The history table seen through the segment's connection: `executed` reads it (inside the segment's
 * transaction), and the rows umzug logs are written by `SegmentRun` before the commit, in one statement.
 */
class SegmentHistoryStorage implements UmzugStorage<SegmentContext> {
  constructor(
    private readonly where: HistoryTable,
    private readonly entries: ReadonlyMap<string, CheckedMigration>,
  ) {}

  async executed({ context }: { context: SegmentContext }): Promise<string[]> {
    if (context.created) return [];
    const rows = await context.sql<{ version: string }[]>`
      select version from ${context.sql(this.where.schema)}.${context.sql(this.where.table)}`;
    return rows.map((row) => row.version);
  }

  async logMigration({ name: version, context }: { name: string; context: SegmentContext }) {
    const entry = this.entries.get(version) as CheckedMigration;
    const started = context.started.get(version) ?? performance.now();
    context.inserted.push({
      version,
      name: entry.name,
      checksum: entry.checksum,
      execution_ms: Math.round(performance.now() - started),
    });
  }

  async unlogMigration({ name: version, context }: { name: string; context: SegmentContext }) {
    context.deleted.push(version);
  }
}

/** A failed attempt of a segment: the migration it is charged to and what PostgreSQL said. */
export class SegmentFailure extends Error {
  constructor(
    readonly entry: CheckedMigration,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

export interface SegmentOptions {
  readonly connection: Connection;
  readonly where: HistoryTable;
  readonly direction: MigrationDirection;
  readonly log: (event: MigratorEvent) => void;
  /** `lock_timeout` of the transaction (0: none). */
  readonly ddlLockTimeoutMs: number;
  /** `statement_timeout` of the transaction; `null` leaves the session's own. */
  readonly statementTimeout: string | null;
  readonly retry: RetryPolicy;
  readonly indexBuildTimeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * Runs one attempt of a segment through umzug: begin, the history table if missing, the migrations (umzug
 * asks the history which are pending and logs each one it ran), the history rows, commit. Umzug's events
 * carry the logging and timing. A failure is thrown as a `SegmentFailure`, the transaction still open:
 * the caller rolls back.
 */
export async function runSegmentOnce(
  segment: Segment,
  options: SegmentOptions,
  history: { exists: boolean; older: boolean },
): Promise<void> {
  const { connection, where, direction, log } = options;
  const last = segment.steps[segment.steps.length - 1] as CheckedMigration;
  const entries = new Map(segment.steps.map((e) => [e.version.text, e]));
  // Outside a transaction, a concurrent index build cleans up after itself (see concurrent-index.ts).
  const sql = segment.transactional
    ? connection
    : withIndexBuilds(connection, {
        retry: options.retry,
        timeoutMs: options.indexBuildTimeoutMs,
        version: last.version.text,
        log,
        signal: options.signal,
      });
  const context: SegmentContext = { sql, inserted: [], deleted: [], started: new Map(), created: false };
  const umzug = new Umzug<SegmentContext>({
    migrations: segment.steps.map(
      (entry): RunnableMigration<SegmentContext> => ({
        name: entry.version.text,
        up: ({ context: ctx }) => runStep(entry, "up", ctx, where),
        down: ({ context: ctx }) => runStep(entry, "down", ctx, where),
      }),
    ),
    storage: new SegmentHistoryStorage(where, entries),
    context,
    logger: undefined,
  });
  const starting = ({ name }: { name: string }) => {
    // A stopped run starts no further migration (the one running has its statement cancelled).
    if (options.signal?.aborted) throw options.signal.reason;
    const entry = entries.get(name) as CheckedMigration;
    context.started.set(name, performance.now());
    log({ level: "info", event: "migrating", version: name, name: entry.name, direction });
  };
  const finished = ({ name }: { name: string }) => {
    const entry = entries.get(name) as CheckedMigration;
    const durationMs = performance.now() - (context.started.get(name) ?? performance.now());
    log({ level: "info", event: "migrated", version: name, name: entry.name, direction, durationMs });
  };
  umzug.on(direction === "up" ? "migrating" : "reverting", starting);
  umzug.on(direction === "up" ? "migrated" : "reverted", finished);

  try {
    if (segment.transactional) {
      await connection`begin`;
      // One statement: the schema and the timeouts, all undone by the commit or rollback.
      await connection`select set_config('search_path', quote_ident(${where.schema}), true),
        set_config('lock_timeout', ${String(options.ddlLockTimeoutMs)}, true),
        set_config('statement_timeout', coalesce(${options.statementTimeout}, current_setting('statement_timeout')), true)`;
    }
    if (!history.exists) {
      await createHistory(connection, where);
      context.created = true;
      // Outside a transaction the table is there from now on; inside, only once the segment commits.
      if (!segment.transactional) history.exists = true;
    }
    if (!segment.transactional) await connection`set search_path to ${connection(where.schema)}`;
    const versions = [...segment.versions];
    if (direction === "up") await umzug.up({ migrations: versions });
    else await umzug.down({ migrations: versions });
    if (history.older && context.inserted.some((row) => row.checksum === null)) {
      await allowNullChecksums(connection, where);
    }
    await writeHistory(connection, where, context.inserted, context.deleted);
    if (segment.transactional) {
      // Stopped after its last statement: rolled back rather than committed (outside a transaction the
      // migration is done and its history row written above).
      if (options.signal?.aborted) throw options.signal.reason;
      await connection`commit`;
    } else await connection`reset search_path`;
    history.exists = true;
    if (context.inserted.some((row) => row.checksum === null)) history.older = false;
  } catch (error) {
    // umzug names the migration that threw; anything else (history write, commit) is the segment's last.
    if (error instanceof MigrationError) {
      const entry = entries.get(error.migration.name) ?? last;
      throw new SegmentFailure(entry, error.cause);
    }
    throw new SegmentFailure(last, error);
  }
}

async function runStep(
  entry: CheckedMigration,
  direction: MigrationDirection,
  context: SegmentContext,
  where: HistoryTable,
) {
  const step = direction === "up" ? entry.migration.up : entry.migration.down;
  const version = entry.version.text;
  // One child span of the run's per migration (each attempt of a retried segment has its own).
  await inSpan(
    migratorTracer(),
    MIGRATION_SPAN,
    { attributes: { version, name: entry.name, direction } },
    async () => step?.({ sql: context.sql, schema: where.schema, version, name: entry.name }),
  );
}
