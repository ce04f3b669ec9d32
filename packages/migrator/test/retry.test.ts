import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Logger } from "@agent-platform/common";
import postgres from "postgres";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  DdlLockTimeoutError,
  IndexBuildError,
  LockTimeoutError,
  MigrationFailedError,
} from "../src/errors.js";
import { createMigrator } from "../src/migrator.js";
import type { Migration, MigratorEvent } from "../src/types.js";
import { retryMigrations } from "./fixtures/retry-migrations.js";
import {
  backends,
  historyVersions,
  TEST_DATABASE_URL,
  tablesIn,
  useBackend,
  useFreshSchema,
} from "./support.js";

const [users, sessions, addEmail] = retryMigrations as [Migration, Migration, Migration];

/** A migrator event as logged: `MigratorEvent` without its level. */
type Fields = { event: MigratorEvent["event"] } & Record<string, unknown>;

/** A logger that hands every migrator event to `onEvent` as it is logged (and keeps them). */
function eventLogger(onEvent: (event: Fields) => void = () => {}) {
  const events: Fields[] = [];
  const record = (fields: object | string) => {
    if (typeof fields !== "object") return;
    const event = fields as Fields;
    events.push(event);
    onEvent(event);
  };
  const logger: Logger = { debug: record, info: record, warn: record, error: record, child: () => logger };
  return { logger, events, retries: () => events.filter((e) => e.event === "retry") };
}

/** Holds `lock table <table> in <mode>` in another session's transaction until the returned function is called. */
async function holdLock(sql: postgres.Sql, table: string, mode = "access share") {
  const holder = await sql.reserve();
  await holder`begin`;
  await holder.unsafe(`lock table ${table} in ${mode} mode`);
  const [row] = await holder<{ pid: number }[]>`select pg_backend_pid() as pid`;
  let released = false;
  return {
    pid: row?.pid as number,
    async release() {
      if (released) return;
      released = true;
      await holder`rollback`;
      holder.release();
    },
  };
}

async function columnsOf(sql: postgres.Sql, schema: string, table: string) {
  const rows = await sql<{ column_name: string }[]>`
    select column_name from information_schema.columns
    where table_schema = ${schema} and table_name = ${table} order by column_name`;
  return rows.map((r) => r.column_name);
}

async function indexState(sql: postgres.Sql, schema: string) {
  const rows = await sql<{ name: string; valid: boolean }[]>`
    select c.relname as name, i.indisvalid as valid from pg_catalog.pg_index i
    join pg_catalog.pg_class c on c.oid = i.indexrelid join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} order by c.relname`;
  return Object.fromEntries(rows.map((r) => [r.name, r.valid]));
}

describe.skipIf(!TEST_DATABASE_URL)(
  "retrying a migration blocked by another session's lock (real PostgreSQL)",
  () => {
    const current = useBackend("postgres");
    const freshSchema = useFreshSchema(current);

    it("rolls back, waits, and runs the transaction again once the lock is gone, naming the relation and its holder", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, schema, migrations: [users] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      try {
        // The holder lets go as soon as the first attempt has failed: the second one gets through.
        const { logger, events, retries } = eventLogger((event) => {
          if (event.event === "retry") void lock.release();
        });
        const migrator = createMigrator({
          sql,
          schema,
          migrations: retryMigrations,
          ddlLockTimeoutMs: 600,
          retry: { attempts: 3, baseMs: 200, maxMs: 400 },
          logger,
        });
        await expect(migrator.migrate()).resolves.toMatchObject({ applied: ["1.1.0", "1.2.0"] });
        expect(retries()).toEqual([
          expect.objectContaining({
            event: "retry",
            version: "1.2.0",
            versions: ["1.1.0", "1.2.0"],
            attempt: 1,
            attempts: 3,
            relation: `${schema}.t_users`,
            blockers: [lock.pid],
          }),
        ]);
        // 1.1.0 shared the failed transaction: rolled back with it and run again, so it ran twice.
        expect(events.filter((e) => e.event === "migrating").map((e) => e.version)).toEqual([
          "1.1.0",
          "1.2.0",
          "1.1.0",
          "1.2.0",
        ]);
        expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
        expect(await columnsOf(sql, schema, "t_users")).toEqual(["email", "id"]);
      } finally {
        await lock.release();
      }
    });

    it("fails after the last attempt with DDL_LOCK_TIMEOUT, the attempts counted and the history unchanged", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, schema, migrations: [users] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      try {
        const { logger, retries } = eventLogger();
        const error = await createMigrator({
          sql,
          schema,
          migrations: retryMigrations,
          ddlLockTimeoutMs: 300,
          retry: { attempts: 3, baseMs: 20, maxMs: 40 },
          logger,
        })
          .migrate()
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DdlLockTimeoutError);
        expect(error).toMatchObject({
          code: "DDL_LOCK_TIMEOUT",
          version: "1.2.0",
          attempts: 3,
          timeoutMs: 300,
          relation: `${schema}.t_users`,
          committed: [],
        });
        expect((error as Error).message).toBe(
          `Migration 1.2.0 (users_email) could not lock ${schema}.t_users within 300 ms (each of 3 attempts) while running up: another session holds a conflicting lock; retry when that session is done`,
        );
        expect(retries().map((e) => e.attempt)).toEqual([1, 2]);
        expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
        expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_users"]);
        expect(await columnsOf(sql, schema, "t_users")).toEqual(["id"]);
      } finally {
        await lock.release();
      }
    });

    it("keeps the advisory lock through the wait: a second run started meanwhile waits and times out", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, schema, migrations: [users] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      let inWait: () => void = () => {};
      const waiting = new Promise<void>((resolve) => {
        inWait = resolve;
      });
      const { logger } = eventLogger((event) => {
        if (event.event === "retry") inWait();
      });
      const first = createMigrator({
        sql,
        schema,
        migrations: retryMigrations,
        ddlLockTimeoutMs: 200,
        retry: { attempts: 2, baseMs: 2_000, maxMs: 2_000 },
        logger,
      }).migrate();
      try {
        await waiting;
        const second = createMigrator({ sql, schema, migrations: retryMigrations, lockTimeoutMs: 300 });
        await expect(second.migrate()).rejects.toBeInstanceOf(LockTimeoutError);
        expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      } finally {
        await lock.release();
      }
      await expect(first).resolves.toMatchObject({ applied: ["1.1.0", "1.2.0"] });
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
    });

    it("ends after N attempts when the blocker is the migration's own other connection", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, schema, migrations: [users] }).migrate();
      const selfBlocking: Migration = {
        ...addEmail,
        up: async ({ sql: run }) => {
          const lock = await holdLock(sql, `${schema}.t_users`);
          try {
            await run`alter table t_users add column email text`;
          } finally {
            await lock.release();
          }
        },
      };
      const error = await createMigrator({
        sql,
        schema,
        migrations: [users, sessions, selfBlocking],
        ddlLockTimeoutMs: 200,
        retry: { attempts: 2, baseMs: 10, maxMs: 10 },
      })
        .migrate()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "DDL_LOCK_TIMEOUT", attempts: 2, version: "1.2.0" });
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
    });

    it("does not retry a statement_timeout that fires before the lock_timeout", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await createMigrator({ sql, schema, migrations: [users] }).migrate();
      const lock = await holdLock(sql, `${schema}.t_users`);
      try {
        const { logger, retries } = eventLogger();
        const error = await createMigrator({
          sql,
          schema,
          migrations: retryMigrations,
          ddlLockTimeoutMs: 2_000,
          statementTimeoutMs: 200,
          retry: { attempts: 3, baseMs: 10 },
          logger,
        })
          .migrate()
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MigrationFailedError);
        expect((error as Error).cause).toMatchObject({ code: "57014" });
        expect(retries()).toEqual([]);
        expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      } finally {
        await lock.release();
      }
    });

    it("retries nothing but lock timeouts", async () => {
      const { sql } = current();
      const schema = freshSchema();
      let runs = 0;
      const failing: Migration = {
        version: "1.0.0",
        name: "failing",
        up: ({ sql: run }) => {
          runs++;
          return run`select * from no_such_table`;
        },
      };
      const { logger, retries } = eventLogger();
      await expect(
        createMigrator({
          sql,
          schema,
          migrations: [failing],
          retry: { attempts: 5, baseMs: 1 },
          logger,
        }).migrate(),
      ).rejects.toMatchObject({ code: "MIGRATION_FAILED" });
      expect(runs).toBe(1);
      expect(retries()).toEqual([]);
    });
  },
);

describe.skipIf(!TEST_DATABASE_URL)("a migrator process killed in a retry wait (real PostgreSQL)", () => {
  const current = useBackend("postgres");
  const freshSchema = useFreshSchema(current);
  const child = fileURLToPath(new URL("./fixtures/retry-child.ts", import.meta.url));

  it("leaves the history unchanged and the advisory lock free for the next run", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [users] }).migrate();
    const lock = await holdLock(sql, `${schema}.t_users`);
    try {
      const proc = spawn(process.execPath, ["--import", "tsx", child, url, schema], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      proc.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        proc.on("exit", (_c, signal) => resolve(signal)),
      );
      await new Promise<void>((resolve, reject) => {
        proc.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("retry-wait")) resolve();
        });
        proc.on("exit", (code) =>
          reject(new Error(`child exited with ${code} before its retry wait: ${stderr}`)),
        );
      });
      proc.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");

      for (let i = 0; ; i++) {
        const [row] = await sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity where application_name = ${`retry-child-${schema}`}`;
        if (row?.n === 0) break;
        if (i > 200) throw new Error("the killed child's session is still there");
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const [advisory] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and a.application_name = ${`retry-child-${schema}`}`;
      expect(advisory?.n).toBe(0);
      expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
      expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "t_users"]);
    } finally {
      await lock.release();
    }
    // The next run takes the lock at once and applies the rest once.
    const next = await createMigrator({
      sql,
      schema,
      migrations: retryMigrations,
      lockTimeoutMs: 1_000,
    }).migrate();
    expect(next).toMatchObject({ applied: ["1.1.0", "1.2.0"] });
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
  });
});

const table: Migration = {
  version: "1.0.0",
  name: "users",
  up: ({ sql }) => sql`create table t_users (id int); insert into t_users values (1), (1)`.simple(),
};
const uniqueIndex = (text: string): Migration => ({
  version: "1.1.0",
  name: "users_unique",
  transaction: false,
  up: ({ sql }) => sql.unsafe(text),
});

describe.each(backends())("a concurrent index build that fails on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  it("replaces an INVALID index of the same name that IF NOT EXISTS would have kept", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [table] }).migrate();
    // An earlier build that failed (by hand here), then the data fixed.
    await expect(
      sql.unsafe(`create unique index concurrently users_unique on ${schema}.t_users (id)`),
    ).rejects.toMatchObject({ code: "23505" });
    await sql`delete from ${sql(schema)}.t_users where ctid > '(0,1)'`;
    expect(await indexState(sql, schema)).toMatchObject({ users_unique: false });

    const { logger, events } = eventLogger();
    await createMigrator({
      sql,
      schema,
      migrations: [
        table,
        uniqueIndex("create unique index concurrently if not exists users_unique on t_users (id)"),
      ],
      retry: { attempts: 2, baseMs: 10 },
      logger,
    }).migrate();
    expect(events.filter((e) => e.event === "index_build_retry")).toMatchObject([
      { dropped: [`${schema}.users_unique`], message: `the build left ${schema}.users_unique INVALID` },
    ]);
    expect(await indexState(sql, schema)).toEqual({ schema_migrations_pkey: true, users_unique: true });
  });

  it("drops the INVALID index an earlier, killed run left before building it (no IF NOT EXISTS)", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [table] }).migrate();
    await expect(
      sql.unsafe(`create unique index concurrently users_unique on ${schema}.t_users (id)`),
    ).rejects.toMatchObject({ code: "23505" });
    await sql`delete from ${sql(schema)}.t_users where ctid > '(0,1)'`;

    const { logger, events } = eventLogger();
    await createMigrator({
      sql,
      schema,
      migrations: [table, uniqueIndex("create unique index concurrently users_unique on t_users (id)")],
      retry: { attempts: 2, baseMs: 10 },
      logger,
    }).migrate();
    // The first attempt failed on the name ("already exists"); the leftover went, the second built it.
    expect(events.filter((e) => e.event === "index_build_retry")).toMatchObject([
      { dropped: [`${schema}.users_unique`], message: 'relation "users_unique" already exists' },
    ]);
    expect(await indexState(sql, schema)).toEqual({ schema_migrations_pkey: true, users_unique: true });
  });

  it("never drops an INVALID index of the same name on another table", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [table] }).migrate();
    await sql.unsafe(`create table ${schema}.other (id int); insert into ${schema}.other values (1), (1)`);
    await expect(
      sql.unsafe(`create unique index concurrently users_unique on ${schema}.other (id)`),
    ).rejects.toMatchObject({ code: "23505" });
    await sql`delete from ${sql(schema)}.t_users where ctid > '(0,1)'`;

    const error = await createMigrator({
      sql,
      schema,
      migrations: [table, uniqueIndex("create unique index concurrently users_unique on t_users (id)")],
      retry: { attempts: 3, baseMs: 10 },
    })
      .migrate()
      .catch((e: unknown) => e);
    expect((error as Error).cause).toMatchObject({
      code: "INDEX_BUILD_FAILED",
      attempts: 1,
      cause: { code: "42P07" },
    });
    expect((error as Error).message).toContain("it left no INVALID index");
    expect(await indexState(sql, schema)).toMatchObject({ users_unique: false });
  });

  it("leaves an unnamed index alone and says why", async () => {
    const { sql } = current();
    const schema = freshSchema();
    const error = await createMigrator({
      sql,
      schema,
      migrations: [table, uniqueIndex("create unique index concurrently on t_users (id)")],
      retry: { attempts: 3, baseMs: 10 },
    })
      .migrate()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationFailedError);
    expect((error as Error).cause).toBeInstanceOf(IndexBuildError);
    expect((error as Error).cause).toMatchObject({ attempts: 1 });
    expect((error as Error).message).toContain("the index is unnamed");
    // The run still lists what is INVALID in the schema, with the fix.
    expect(error).toMatchObject({ invalidIndexes: [`${schema}.t_users_id_idx`] });
    expect((error as Error).message).toContain("DROP INDEX CONCURRENTLY");
  });

  it("drops the _ccnew copy a failed REINDEX INDEX CONCURRENTLY left, and says so", async () => {
    const { sql } = current();
    const schema = freshSchema();
    await withFlaggedIndex(sql, schema);
    const error = await createMigrator({
      sql,
      schema,
      migrations: [table, uniqueIndex("reindex index concurrently users_f")],
      retry: { attempts: 2, baseMs: 10 },
    })
      .migrate()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationFailedError);
    expect((error as Error).message).toContain(
      `REINDEX INDEX CONCURRENTLY "users_f" failed after 2 attempts (flagged); the INVALID index it left (${schema}.users_f_ccnew) was dropped`,
    );
    expect(error).toMatchObject({ invalidIndexes: [] });
    expect(await indexState(sql, schema)).toEqual({ schema_migrations_pkey: true, users_f: true });
  });
});

/** `users_f`, a valid index on `f(id)`, where `f` fails while the table `flag` has a row (it has one). */
async function withFlaggedIndex(sql: postgres.Sql, schema: string) {
  await createMigrator({ sql, schema, migrations: [table] }).migrate();
  await sql.unsafe(`
    create table ${schema}.flag (up boolean);
    create function ${schema}.f(int) returns int language plpgsql immutable as $$
    begin
      if exists (select 1 from ${schema}.flag) then raise exception 'flagged'; end if;
      return $1;
    end $$;
    create index users_f on ${schema}.t_users (${schema}.f(id));
    insert into ${schema}.flag values (true);`);
}

describe.skipIf(!TEST_DATABASE_URL)("the budget of a concurrent index build (real PostgreSQL)", () => {
  const current = useBackend("postgres");
  const freshSchema = useFreshSchema(current);

  /** An open writing transaction on the table: a concurrent build waits for it to end. */
  async function openWriter(sql: postgres.Sql, schema: string) {
    const writer = await sql.reserve();
    await writer`begin`;
    await writer.unsafe(`insert into ${schema}.t_users values (2)`);
    return async () => {
      await writer`rollback`;
      writer.release();
    };
  }

  it("is not cut short by a lock timeout, the run's or the session's", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [table] }).migrate();
    await sql`delete from ${sql(schema)}.t_users where ctid > '(0,1)'`;
    const release = await openWriter(sql, schema);
    // A role or pool that sets lock_timeout for every session, as many do for the application.
    const strict = postgres(url, { max: 2, onnotice: () => {}, connection: { lock_timeout: 100 } });
    onTestFinished(() => strict.end({ timeout: 5 }));
    const run = createMigrator({
      sql: strict,
      schema,
      migrations: [table, uniqueIndex("create unique index concurrently users_unique on t_users (id)")],
      ddlLockTimeoutMs: 100,
      retry: false,
    }).migrate();
    // Well past the DDL lock timeout the build is still waiting for the writer, then completes.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await release();
    await expect(run).resolves.toMatchObject({ applied: ["1.1.0"] });
    expect(await indexState(sql, schema)).toMatchObject({ users_unique: true });
  });

  it("ends the build at indexBuildTimeoutMs and says what became of its INVALID index", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    await createMigrator({ sql, schema, migrations: [table] }).migrate();
    await sql`delete from ${sql(schema)}.t_users where ctid > '(0,1)'`;
    const release = await openWriter(sql, schema);
    // One connection with timeouts of its own, so the check after the run reads the run's session.
    const single = postgres(url, {
      max: 1,
      onnotice: () => {},
      connection: { lock_timeout: 2_345, statement_timeout: 12_345 },
    });
    onTestFinished(() => single.end({ timeout: 5 }));
    try {
      const started = performance.now();
      const error = await createMigrator({
        sql: single,
        schema,
        migrations: [table, uniqueIndex("create unique index concurrently users_unique on t_users (id)")],
        indexBuildTimeoutMs: 300,
        retry: { attempts: 2, baseMs: 10 },
      })
        .migrate()
        .catch((e: unknown) => e);
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(error).toBeInstanceOf(MigrationFailedError);
      const cause = (error as Error).cause as IndexBuildError;
      expect(cause).toBeInstanceOf(IndexBuildError);
      expect(cause.cause).toMatchObject({ code: "57014" });
      // DROP INDEX CONCURRENTLY waits for the same writer, under the same budget: it cannot drop it, and says so.
      expect(cause.left).toEqual([`${schema}.users_unique`]);
      expect(cause.message).toContain(`${schema}.users_unique could not be dropped`);
      expect(cause.message).toContain("DROP INDEX CONCURRENTLY IF EXISTS");
    } finally {
      await release();
    }
    // The session's own timeouts are back after the build.
    const [row] =
      await single`select current_setting('lock_timeout') as l, current_setting('statement_timeout') as s`;
    expect(row).toEqual({ l: "2345ms", s: "12345ms" });
  });
});

describe.skipIf(!TEST_DATABASE_URL)(
  "a concurrent index build retried once the data allows it (real PostgreSQL)",
  () => {
    const current = useBackend("postgres");
    const freshSchema = useFreshSchema(current);

    it("drops the INVALID index it left and builds it again once the data allows it", async () => {
      const { sql } = current();
      const schema = freshSchema();
      // The duplicate goes as soon as the first build has failed and its index has been dropped.
      const { logger, events } = eventLogger((event) => {
        if (event.event === "index_build_retry") {
          sql`delete from ${sql(schema)}.t_users where ctid > '(0,1)'`.then(
            () => {},
            () => {},
          );
        }
      });
      const migrator = createMigrator({
        sql,
        schema,
        migrations: [table, uniqueIndex("create unique index concurrently users_unique on t_users (id)")],
        retry: { attempts: 3, baseMs: 400, maxMs: 400 },
        logger,
      });
      await expect(migrator.migrate()).resolves.toMatchObject({ applied: ["1.0.0", "1.1.0"] });
      expect(events.filter((e) => e.event === "index_build_retry")).toEqual([
        expect.objectContaining({
          version: "1.1.0",
          statement: "CREATE INDEX CONCURRENTLY users_unique",
          attempt: 1,
          attempts: 3,
          dropped: [`${schema}.users_unique`],
          message: 'could not create unique index "users_unique"',
        }),
      ]);
      expect(await indexState(sql, schema)).toEqual({ schema_migrations_pkey: true, users_unique: true });
    });

    it("builds the REINDEX again once its cause is gone", async () => {
      const { sql } = current();
      const schema = freshSchema();
      await withFlaggedIndex(sql, schema);
      const { logger, events } = eventLogger((event) => {
        if (event.event === "index_build_retry") {
          sql`delete from ${sql(schema)}.flag`.then(
            () => {},
            () => {},
          );
        }
      });
      await createMigrator({
        sql,
        schema,
        migrations: [table, uniqueIndex("reindex (verbose) index concurrently users_f")],
        retry: { attempts: 3, baseMs: 400, maxMs: 400 },
        logger,
      }).migrate();
      expect(events.filter((e) => e.event === "index_build_retry")).toMatchObject([
        {
          statement: 'REINDEX INDEX CONCURRENTLY "users_f"',
          dropped: [`${schema}.users_f_ccnew`],
          message: "flagged",
        },
      ]);
      expect(await indexState(sql, schema)).toEqual({ schema_migrations_pkey: true, users_f: true });
    });
  },
);
