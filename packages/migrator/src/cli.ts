import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError } from "@agent-platform/common";
import postgres from "postgres";
import { checksumOf } from "./checksum.js";
import { createMigrationFiles } from "./create.js";
import { MigrationAbortedError, MigratorError } from "./errors.js";
import { formatLintReport } from "./lint/format.js";
import { lint } from "./lint/lint.js";
import type { LintRuleId } from "./lint/rules.js";
import { createMigrator } from "./migrator.js";
import { BASE } from "./plan.js";
import { sqlMigrations } from "./sql-files.js";
import type { MigrateResult, MigrationStatus } from "./types.js";

const USAGE = `Usage: platform-migrate <command> [options]

Commands:
  status [--with-sql]    show the current, latest, applied and pending versions
  up [--to V | --steps N]
                         apply pending migrations up to V, or the next N (default: all)
  down (--to V | --to base | --steps N)
                         revert applied migrations above V (base: all of them), or the newest N
  create <name> [--version V]
                         write <version>_<name>.up.sql and .down.sql in --dir (default version: the
                         next patch after the highest existing one)
  lint [DIR] [--start-after V] [--ddl-lock-timeout-ms MS] [--statement-timeout-ms MS]
       [--postgres-version N] [--enable RULE[,RULE]]
                         check the up files of DIR (default: --dir) for unsafe migrations on PostgreSQL's
                         parser, only those above V if given, for PostgreSQL N and later (default: 14),
                         with the opt-in rules named; exit status 1 on any error finding (needs
                         libpg-query: npm install --save-dev libpg-query@^17.7.4)

Options:
  --database-url URL     PostgreSQL connection string (default: $DATABASE_URL)
  --dir DIR              directory of <version>_<name>.up.sql / .down.sql files (default: ./migrations)
  --schema NAME          schema the migrations run in (default: public)
  --table NAME           history table in that schema (default: schema_migrations)
  --lock-timeout-ms MS   how long to wait for another run's lock (default: 30000)
  --ddl-lock-timeout-ms MS
                         how long a migration may wait for a lock on a table (default: 5000; 0: no limit)
  --statement-timeout-ms MS
                         statement_timeout of the run's transactions (default: the server's)
  --retry-attempts N     tries of a migration that hits the DDL lock timeout, or of a concurrent index
                         build that fails (default: 4; 1: no retry)
  --retry-max-ms MS      longest wait between two tries (default: 10000; waits double from 500)
  --index-build-timeout-ms MS
                         statement_timeout of each concurrent index build (default: 0, no limit)
  --dry-run              print the plan, change nothing (up, down)
  --json                 print JSON instead of text
  --with-sql             status --json: include each migration's SQL text
  -h, --help             show this help`;

/** A mistake on the command line: exit code 2 with the usage text. */
class UsageError extends Error {}

interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

async function run(argv: string[], env: NodeJS.ProcessEnv, io: Output, signal: AbortSignal): Promise<number> {
  let json = argv.includes("--json");
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        "database-url": { type: "string" },
        dir: { type: "string", default: "migrations" },
        schema: { type: "string" },
        table: { type: "string" },
        "lock-timeout-ms": { type: "string" },
        "ddl-lock-timeout-ms": { type: "string" },
        "statement-timeout-ms": { type: "string" },
        "retry-attempts": { type: "string" },
        "retry-max-ms": { type: "string" },
        "index-build-timeout-ms": { type: "string" },
        to: { type: "string" },
        steps: { type: "string" },
        version: { type: "string" },
        "start-after": { type: "string" },
        "postgres-version": { type: "string" },
        enable: { type: "string" },
        "with-sql": { type: "boolean", default: false },
        "dry-run": { type: "boolean", default: false },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    json = values.json;
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    const [command, ...extra] = positionals;
    if (command === "create") {
      const [name, ...rest] = extra;
      if (name === undefined) throw new UsageError("create needs a name: create <name> [--version V]");
      if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
      const written = createMigrationFiles(resolve(values.dir), name, values.version);
      io.out(json ? JSON.stringify(written, null, 2) : `Created ${written.up}\nCreated ${written.down}`);
      return 0;
    }
    if (command === "lint") {
      const [dir, ...rest] = extra;
      if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
      const { to, steps, version, schema, table } = values;
      if (
        [to, steps, version, schema, table, values["database-url"]].some((v) => v !== undefined) ||
        values["dry-run"] ||
        values["with-sql"]
      ) {
        throw new UsageError(
          "lint takes only [DIR] (or --dir), --start-after, --ddl-lock-timeout-ms, --statement-timeout-ms, --postgres-version, --enable and --json",
        );
      }
      const ddlLockTimeoutMs = milliseconds(values, "ddl-lock-timeout-ms");
      const statementTimeoutMs = milliseconds(values, "statement-timeout-ms");
      const postgresVersion = values["postgres-version"];
      if (postgresVersion !== undefined && !/^\d{1,2}$/.test(postgresVersion)) {
        throw new UsageError(
          `--postgres-version needs a major version such as 15, got ${JSON.stringify(postgresVersion)}`,
        );
      }
      const report = await lint(dir ?? values.dir, {
        ...(values["start-after"] === undefined ? {} : { startAfter: values["start-after"] }),
        ...(ddlLockTimeoutMs === undefined ? {} : { ddlLockTimeoutMs }),
        ...(statementTimeoutMs === undefined ? {} : { statementTimeoutMs }),
        ...(postgresVersion === undefined ? {} : { postgresVersion: Number(postgresVersion) }),
        ...(values.enable === undefined
          ? {}
          : { enable: values.enable.split(",").map((id) => id.trim()) as LintRuleId[] }),
      });
      io.out(json ? JSON.stringify(report, null, 2) : formatLintReport(report));
      return report.errors > 0 ? 1 : 0;
    }
    for (const flag of ["start-after", "postgres-version", "enable"] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} is for lint`);
    }
    if (command !== "status" && command !== "up" && command !== "down") {
      throw new UsageError(command ? `unknown command ${JSON.stringify(command)}` : "missing command");
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
    if (values.to !== undefined && values.steps !== undefined) {
      throw new UsageError("give either --to or --steps, not both");
    }
    if (command === "down" && values.to === undefined && values.steps === undefined) {
      throw new UsageError("down needs --to <version|base> or --steps <n>");
    }
    if (
      command === "status" &&
      (values.to !== undefined || values.steps !== undefined || values["dry-run"])
    ) {
      throw new UsageError("status takes no --to, --steps or --dry-run");
    }
    if (values["with-sql"] && command !== "status") throw new UsageError("--with-sql is for status");
    if (values.version !== undefined) throw new UsageError("--version is for create");
    const stepCount = values.steps === undefined ? undefined : Number(values.steps);
    if (values.steps !== undefined && (!/^[1-9]\d{0,5}$/.test(values.steps) || stepCount === undefined)) {
      throw new UsageError(`--steps needs a positive whole number, got ${JSON.stringify(values.steps)}`);
    }
    const url = values["database-url"] ?? env.DATABASE_URL;
    if (!url) throw new UsageError("no database: pass --database-url or set DATABASE_URL");
    // The migrator checks the range: one rule for the library and the CLI.
    const timeouts = {
      lockTimeoutMs: milliseconds(values, "lock-timeout-ms"),
      ddlLockTimeoutMs: milliseconds(values, "ddl-lock-timeout-ms"),
      statementTimeoutMs: milliseconds(values, "statement-timeout-ms"),
      indexBuildTimeoutMs: milliseconds(values, "index-build-timeout-ms"),
    };
    const retry = {
      attempts: milliseconds(values, "retry-attempts"),
      maxMs: milliseconds(values, "retry-max-ms"),
    };

    const dir = resolve(values.dir);
    const migrations = sqlMigrations(dir);
    if (migrations.length === 0) throw new UsageError(`no <version>_<name>.up.sql files in ${dir}`);
    // The run holds one connection; the second, opened only if a migration waits on a table lock for
    // half the DDL lock timeout, watches that wait to name the relation (see lock-wait.ts).
    const sql = postgres(url, { max: 2, onnotice: () => {}, connect_timeout: 10 });
    try {
      const migrator = createMigrator({
        sql,
        migrations,
        ...(values.schema === undefined ? {} : { schema: values.schema }),
        ...(values.table === undefined ? {} : { table: values.table }),
        ...Object.fromEntries(Object.entries(timeouts).filter(([, value]) => value !== undefined)),
        retry: Object.fromEntries(Object.entries(retry).filter(([, value]) => value !== undefined)),
      });
      if (command === "status") {
        const status = await migrator.status();
        io.out(json ? JSON.stringify(statusJson(status, values["with-sql"]), null, 2) : formatStatus(status));
        return 0;
      }
      const to = values.to;
      const dryRun = values["dry-run"];
      const target =
        stepCount !== undefined
          ? { steps: command === "down" ? -stepCount : stepCount }
          : to === undefined
            ? {}
            : { to };
      // `up` never reverts and `down` never applies: check the direction on the plan before running it.
      // The run then goes to the version the plan names, so `--steps` means what was planned.
      const plan = await migrator.migrate({ ...target, dryRun: true });
      if (plan.direction !== "none" && plan.direction !== command) {
        throw new UsageError(
          `${plan.to ?? BASE} is ${command === "up" ? "below" : "above"} the current version ${plan.from}; use ${plan.direction} --to ${plan.to ?? BASE}`,
        );
      }
      const result = dryRun ? plan : await migrator.migrate({ to: plan.to ?? BASE, signal });
      io.out(json ? JSON.stringify({ ...result, dryRun }, null, 2) : formatResult(result, dryRun));
      return 0;
    } finally {
      await sql.end({ timeout: 5 });
    }
  } catch (error) {
    const usage =
      error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    const code =
      error instanceof MigratorError || error instanceof ConfigError ? error.code : usage ? "USAGE" : "ERROR";
    const message = describe(error);
    if (json) io.err(JSON.stringify({ error: { code, message } }));
    else io.err(`platform-migrate: ${message}${usage ? `\n\n${USAGE}` : ""}`);
    if (error instanceof MigrationAbortedError) return STOPPED_EXIT_CODE;
    return usage ? 2 : 1;
  }
}

/**
 * A `--*-ms` (or other count) option as a number; digits only, so `1e3`, `0x10` or `-1` are refused as
 * written. The migrator checks the range.
 */
function milliseconds(values: Record<string, unknown>, flag: string): number | undefined {
  const text = values[flag];
  if (text === undefined) return undefined;
  if (typeof text !== "string" || !/^\d{1,16}$/.test(text)) {
    const unit = flag.endsWith("-ms") ? "milliseconds" : "";
    throw new UsageError(
      `--${flag} needs a whole number${unit && ` of ${unit}`}, got ${JSON.stringify(text)}`,
    );
  }
  return Number(text);
}

/** A one-line reason, also for errors whose message is empty (e.g. an AggregateError from connect). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const nested = error instanceof AggregateError ? error.errors.map(describe).join("; ") : "";
  const code = (error as { code?: unknown }).code;
  return error.message || nested || (typeof code === "string" ? code : error.name);
}

function formatStatus(status: MigrationStatus): string {
  const lines = [`current: ${status.current ?? "(none)"}`, `latest:  ${status.latest}`];
  lines.push(status.applied.length ? "applied:" : "applied: (none)");
  for (const m of status.applied) {
    lines.push(`  ${m.version}  ${m.name}  ${m.appliedAt.toISOString()}  ${m.executionMs} ms`);
  }
  lines.push(status.pending.length ? "pending:" : "pending: (none)");
  for (const m of status.pending) lines.push(`  ${m.version.replace(/^v/, "")}  ${m.name}`);
  lines.push(
    status.lock === null
      ? "lock:    free (no migration running)"
      : `lock:    held by a migration run (backend pid ${status.lock.pid}${status.lock.since ? `, since ${status.lock.since.toISOString()}` : ""})`,
  );
  if (status.invalidIndexes.length) {
    lines.push(
      "invalid indexes (left by a failed CREATE INDEX CONCURRENTLY; DROP INDEX CONCURRENTLY, then re-run):",
    );
    for (const name of status.invalidIndexes) lines.push(`  ${name}`);
  }
  return lines.join("\n");
}

/** What `status --json` prints: versions, names, checksums and state; SQL text only when asked for. */
function statusJson(status: MigrationStatus, withSql: boolean) {
  return {
    current: status.current,
    latest: status.latest,
    applied: status.applied.map((m) => ({ ...m, state: "applied" })),
    invalidIndexes: status.invalidIndexes,
    // A run in progress (here or in another process): its session, and since when it holds the lock.
    lock:
      status.lock === null ? null : { pid: status.lock.pid, since: status.lock.since?.toISOString() ?? null },
    pending: status.pending.map((m) => ({
      version: m.version.replace(/^v/, ""),
      name: m.name,
      checksum: checksumOf(m),
      state: "pending",
      ...(withSql ? { sql: m.source ?? null } : {}),
    })),
  };
}

function formatResult(result: MigrateResult, dryRun: boolean): string {
  if (result.direction === "none") return `Already at ${result.to ?? BASE}; nothing to do.`;
  const verb = result.direction === "up" ? "apply" : "revert";
  const list = result.applied.join(", ");
  return dryRun
    ? `Dry run: would ${verb} ${list} (${result.from ?? BASE} -> ${result.to ?? BASE}); nothing changed.`
    : `Migrated ${result.from ?? BASE} -> ${result.to ?? BASE}: ${verb === "apply" ? "applied" : "reverted"} ${list}.`;
}

/** A run stopped by SIGINT or SIGTERM, after its statement was cancelled and rolled back (as a shell's 128 + SIGINT). */
const STOPPED_EXIT_CODE = 130;

// The first Ctrl-C or SIGTERM stops the run cleanly (the running statement cancelled and rolled back, the
// lock released); a second one exits at once, leaving PostgreSQL to roll back when the socket closes.
const stop = new AbortController();
const onSignal = (name: NodeJS.Signals) => {
  if (stop.signal.aborted) process.exit(STOPPED_EXIT_CODE);
  process.stderr.write(`platform-migrate: ${name}: cancelling the running statement and rolling back\n`);
  stop.abort(new Error(`stopped by ${name}`));
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
process.exitCode = await run(
  process.argv.slice(2),
  process.env,
  {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  },
  stop.signal,
);
process.off("SIGINT", onSignal);
process.off("SIGTERM", onSignal);
