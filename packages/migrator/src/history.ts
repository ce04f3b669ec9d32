import type postgres from "postgres";
import type { AppliedMigration } from "./types.js";

/** Where the history lives; both names are validated identifiers (see `identifier.ts`). */
export interface HistoryTable {
  readonly schema: string;
  readonly table: string;
}

export interface HistoryRow {
  readonly version: string;
  readonly name: string;
  readonly checksum: string | null;
  readonly execution_ms: number;
}

type Sql = postgres.ISql;

const UNDEFINED_TABLE = "42P01";
const INVALID_SCHEMA_NAME = "3F000";

/** The applied migrations in one query, or `null` when the history table does not exist yet. */
export async function readHistory(sql: Sql, where: HistoryTable): Promise<AppliedMigration[] | null> {
  try {
    const rows = await sql<
      { version: string; name: string; checksum: string | null; applied_at: Date; execution_ms: number }[]
    >`select version, name, checksum, applied_at, execution_ms from ${sql(where.schema)}.${sql(where.table)}`;
    return rows.map((r) => ({
      version: r.version,
      name: r.name,
      checksum: r.checksum,
      appliedAt: r.applied_at,
      executionMs: r.execution_ms,
    }));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === UNDEFINED_TABLE || code === INVALID_SCHEMA_NAME) return null;
    throw error;
  }
}

/** Creates the schema (only if missing, so no CREATE privilege on the database is needed otherwise) and the table. */
export async function createHistory(sql: Sql, where: HistoryTable): Promise<void> {
  const [found] = await sql`select 1 from pg_catalog.pg_namespace where nspname = ${where.schema}`;
  if (!found) await sql`create schema if not exists ${sql(where.schema)}`;
  await sql`
    create table if not exists ${sql(where.schema)}.${sql(where.table)} (
      version text primary key,
      name text not null,
      checksum text,
      applied_at timestamptz not null default now(),
      execution_ms integer not null
    )`;
}

/**
 * Lets a history table created by an older version of this package (`checksum text not null`) take rows
 * without a checksum. Checked first, so a table that already allows them is not locked by an ALTER.
 */
export async function allowNullChecksums(sql: Sql, where: HistoryTable): Promise<void> {
  const [column] = await sql<{ attnotnull: boolean }[]>`
    select a.attnotnull from pg_catalog.pg_attribute a
    join pg_catalog.pg_class c on c.oid = a.attrelid
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${where.schema} and c.relname = ${where.table} and a.attname = 'checksum'`;
  if (column?.attnotnull) {
    await sql`alter table ${sql(where.schema)}.${sql(where.table)} alter column checksum drop not null`;
  }
}

/** Records and removes history rows in at most two statements. */
export async function writeHistory(
  sql: Sql,
  where: HistoryTable,
  inserted: readonly HistoryRow[],
  deleted: readonly string[],
): Promise<void> {
  const target = sql`${sql(where.schema)}.${sql(where.table)}`;
  if (inserted.length > 0) {
    await sql`insert into ${target} ${sql(inserted as HistoryRow[], "version", "name", "checksum", "execution_ms")}`;
  }
  if (deleted.length > 0) {
    await sql`delete from ${target} where version in ${sql(deleted as string[])}`;
  }
}
