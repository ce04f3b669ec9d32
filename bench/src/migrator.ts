import postgres from "postgres";
import { databaseGroup } from "./group.js";
import { isUnavailable, loadExport } from "./ours.js";
import { median, sig } from "./stats.js";
import type { GroupResult, Table, Target } from "./types.js";

/** The migrator API as documented in its issue, typed structurally so the harness does not pin its internals. */
interface MigrationLike {
  version: string;
  name: string;
  source: string;
  up: (ctx: { sql: postgres.Sql }) => unknown;
}
type CreateMigrator = (options: {
  sql: postgres.Sql;
  migrations: MigrationLike[];
  schema: string;
  table: string;
}) => { migrate(): Promise<{ applied: string[] }> };

const HISTORY = "schema_migrations";

function migrations(count: number): MigrationLike[] {
  return Array.from({ length: count }, (_, i) => {
    const ddl = `CREATE TABLE t${i + 1} (id integer)`;
    return {
      version: `1.0.${i + 1}`,
      name: `create_t${i + 1}`,
      source: ddl,
      up: ({ sql }) => sql.unsafe(ddl),
    };
  });
}

/** A client that counts every query it sends (postgres.js `debug`), to report round trips. */
function countingClient(url: string) {
  const queries: string[] = [];
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, query) => {
      queries.push(query.replace(/\s+/g, " ").trim().slice(0, 120));
    },
  });
  return { sql, queries };
}

/** The lower bound: BEGIN; the history table; every DDL; one INSERT of all history rows; COMMIT. */
async function handWrittenBatch(sql: postgres.Sql, schema: string, list: MigrationLike[]): Promise<void> {
  await sql.begin(async (tx) => {
    await tx.unsafe(`SET LOCAL search_path TO "${schema}"`);
    await tx.unsafe(
      `CREATE TABLE IF NOT EXISTS ${HISTORY} (version text PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), execution_ms integer NOT NULL)`,
    );
    for (const m of list) await tx.unsafe(m.source);
    const rows = list.map((m) => ({
      version: m.version,
      name: m.name,
      checksum: "x".repeat(64),
      execution_ms: 0,
    }));
    await tx`INSERT INTO ${tx(HISTORY)} ${tx(rows)}`;
  });
}

interface Timed {
  ms: number;
  queries: number;
}

async function timed(
  url: string,
  fn: (sql: postgres.Sql) => Promise<unknown>,
): Promise<Timed & { log: string[] }> {
  const { sql, queries } = countingClient(url);
  try {
    await sql`SELECT 1`; // the connection is open before the clock starts
    queries.length = 0;
    const start = performance.now();
    await fn(sql);
    const ms = performance.now() - start;
    return { ms, queries: queries.length, log: [...queries] };
  } finally {
    await sql.end();
  }
}

export async function runMigratorGroup(options: { quick: boolean }): Promise<GroupResult> {
  const { base, skip, url, skipped } = databaseGroup("migrator", "3. Migrator on real PostgreSQL");
  if (url === undefined) return skipped;
  const createMigrator = await loadExport<CreateMigrator>("@agent-platform/migrator", "createMigrator");
  if (isUnavailable(createMigrator)) return skip(createMigrator.unavailable);

  const count = options.quick ? 20 : 200;
  const repetitions = options.quick ? 1 : 9;
  const list = migrations(count);
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const freshSchema = async () => {
    const schema = `bench_mig_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.unsafe(`CREATE SCHEMA "${schema}"`);
    return schema;
  };
  const drop = (schema: string) => admin.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
  const migratorRuns: Timed[] = [];
  const batchRuns: Timed[] = [];
  const noopRuns: (Timed & { log: string[] })[] = [];
  const noopFloorRuns: Timed[] = [];
  try {
    for (let rep = 0; rep < repetitions; rep++) {
      console.log(`migrator: repetition ${rep + 1}/${repetitions}`);
      // Alternate which side goes first, so neither always meets a freshly vacuumed catalog.
      const sides = [
        async () => {
          const schema = await freshSchema();
          try {
            migratorRuns.push(
              await timed(url, async (sql) => {
                const result = await createMigrator({
                  sql,
                  migrations: list,
                  schema,
                  table: HISTORY,
                }).migrate();
                if (result.applied.length !== count)
                  throw new Error(`migrate() applied ${result.applied.length}`);
              }),
            );
            // No-op with everything applied: a new client, as a second app instance booting would have.
            noopRuns.push(
              await timed(url, (sql) =>
                createMigrator({ sql, migrations: list, schema, table: HISTORY }).migrate(),
              ),
            );
            noopFloorRuns.push(
              await timed(url, (sql) => sql.unsafe(`SELECT max(version) FROM "${schema}".${HISTORY}`)),
            );
          } finally {
            await drop(schema);
          }
        },
        async () => {
          const schema = await freshSchema();
          try {
            batchRuns.push(await timed(url, (sql) => handWrittenBatch(sql, schema, list)));
          } finally {
            await drop(schema);
          }
        },
      ];
      for (const side of rep % 2 === 0 ? sides : sides.reverse()) await side();
    }
  } finally {
    await admin.end();
  }

  const med = (runs: Timed[]) => ({
    ms: median(runs.map((r) => r.ms)),
    queries: median(runs.map((r) => r.queries)),
  });
  const figures = {
    migrations: count,
    repetitions,
    migrator: med(migratorRuns),
    handWrittenBatch: med(batchRuns),
    noop: med(noopRuns),
    noopFloor: med(noopFloorRuns),
    noopQueries: noopRuns[0]?.log ?? [],
    raw: {
      migratorRuns,
      batchRuns,
      noopRuns: noopRuns.map(({ ms, queries }) => ({ ms, queries })),
      noopFloorRuns,
    },
  };
  const applyRatio = figures.migrator.ms / figures.handWrittenBatch.ms;
  const tables: Table[] = [
    {
      title: `Applying ${count} trivial migrations (median of ${repetitions}, fresh schema each)`,
      columns: ["run", "wall ms", "× batch", "queries sent"],
      rows: [
        [
          "hand-written batch through postgres.js (floor)",
          sig(figures.handWrittenBatch.ms),
          "1.00x",
          String(figures.handWrittenBatch.queries),
        ],
        [
          "ours: one migrate()",
          sig(figures.migrator.ms),
          `${applyRatio.toFixed(2)}x`,
          String(figures.migrator.queries),
        ],
      ],
    },
    {
      title: `No-op migrate() with ${count} applied (median of ${repetitions})`,
      columns: ["run", "wall ms", "queries sent (round trips)"],
      rows: [
        ["one SELECT of the history (floor)", sig(figures.noopFloor.ms), String(figures.noopFloor.queries)],
        ["ours: migrate()", sig(figures.noop.ms), String(figures.noop.queries)],
      ],
      notes: [`The queries of one no-op migrate(): ${figures.noopQueries.map((q) => `\`${q}\``).join("; ")}`],
    },
  ];
  const targets: Target[] = [
    {
      name: `${count} migrations in one migrate()`,
      goal: "≤ 1.5x the hand-written batch",
      measured: `${sig(figures.migrator.ms)} ms vs ${sig(figures.handWrittenBatch.ms)} ms = ${applyRatio.toFixed(2)}x`,
      met: applyRatio <= 1.5,
    },
    {
      name: `No-op migrate() with ${count} applied`,
      goal: "≤ 3 round trips",
      measured: `${figures.noop.queries} queries, ${sig(figures.noop.ms)} ms`,
      met: figures.noop.queries <= 3,
    },
  ];
  return {
    ...base,
    method: [
      `${count} migrations, each \`CREATE TABLE tN (id integer)\` as a code migration, applied by one \`createMigrator({ sql, migrations, schema, table }).migrate()\` on a fresh, empty schema; against the lower bound through postgres.js: \`BEGIN; SET LOCAL search_path; CREATE TABLE history; ${count} DDL statements; one INSERT of ${count} history rows; COMMIT\`.`,
      `Each run gets its own postgres.js client (pool of 1, connection opened before the clock starts); ${repetitions} repetitions alternating which side goes first; median.`,
      "Round trips: every query the client sends, counted with postgres.js's `debug` callback (pipelined queries would count once each, so this is an upper bound). The no-op runs on a new client against the schema the migrator just filled, as a second instance booting would.",
    ],
    tables,
    charts: [
      {
        title: `Migrator: ${count} migrations and a no-op, wall ms`,
        unit: "milliseconds",
        higherIsBetter: false,
        sections: [
          {
            name: `${count} migrations`,
            bars: [
              { label: "hand-written batch (floor)", kind: "floor", value: figures.handWrittenBatch.ms },
              { label: "ours: migrate()", kind: "ours", value: figures.migrator.ms },
            ],
          },
          {
            name: `no-op with ${count} applied`,
            bars: [
              { label: "one SELECT (floor)", kind: "floor", value: figures.noopFloor.ms },
              { label: "ours: migrate()", kind: "ours", value: figures.noop.ms },
            ],
          },
        ],
      },
    ],
    targets,
    figures,
  };
}
