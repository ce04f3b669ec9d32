import type postgres from "postgres";

/**
 * `schema.index` (quoted where needed, ready for `DROP INDEX CONCURRENTLY`) of every index in `schema` that
 * is not valid: what a failed `CREATE INDEX CONCURRENTLY` leaves behind, or one another session is building.
 */
export async function invalidIndexes(sql: postgres.ISql, schema: string): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as name
    from pg_catalog.pg_index i
    join pg_catalog.pg_class c on c.oid = i.indexrelid
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and not i.indisvalid
    order by c.relname`;
  return rows.map((row) => row.name);
}
