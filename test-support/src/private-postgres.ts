import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

/** Where Debian's PostgreSQL 15 puts initdb and postgres; fault tests skip (visibly) without it. */
export const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";

/** Why a private cluster cannot be started on this machine, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!existsSync(join(POSTGRES_BIN, "initdb"))) return `no PostgreSQL server binaries in ${POSTGRES_BIN}`;
  if (process.getuid?.() === 0 && postgresUser() === undefined) {
    return "running as root and there is no `postgres` user to run PostgreSQL as";
  }
  return undefined;
}

/**
 * A PostgreSQL cluster of one test: its own data directory and port, so the test may kill, freeze or reconfigure
 * it without touching anyone else's database.
 */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly url: string;
  readonly port: number;
  /**
   * Sends `signal` to every process of the cluster, the postmaster and its children (SIGKILL: a crash; SIGSTOP and
   * SIGCONT: a frozen host).
   */
  signal(signal: NodeJS.Signals): void;
  /** Starts the cluster again on the same directory and port (after a SIGKILL: crash recovery) and waits for it. */
  start(): Promise<void>;
  /** A URL for `database` (and `user`) on this cluster. */
  urlOf(database: string, user?: string): string;
  /** Runs statements as the superuser on a connection of their own. */
  admin<T>(run: (sql: postgres.Sql) => Promise<T>, database?: string): Promise<T>;
  /** Kills the cluster and removes its directory. */
  destroy(): Promise<void>;
}

/** initdb into a temporary directory (as `postgres` when running as root) and start it on a free port. */
export async function startPrivatePostgres(settings: Record<string, string> = {}): Promise<PrivatePostgres> {
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  const root = await mkdtemp(join(tmpdir(), "private-pg-"));
  const dataDir = join(root, "data");
  if (user !== undefined) await chown(root, user.uid, user.gid);
  const asUser = user === undefined ? {} : { uid: user.uid, gid: user.gid };
  execFileSync(
    join(POSTGRES_BIN, "initdb"),
    ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
    { ...asUser, stdio: "ignore", cwd: root },
  );
  const port = await freePort();
  const args = [
    "-D",
    dataDir,
    "-p",
    String(port),
    "-k",
    root,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "shared_buffers=16MB",
    ...Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ];
  let postmaster: ChildProcess | undefined;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const urlOf = (database: string, name = "postgres") => `postgres://${name}@127.0.0.1:${port}/${database}`;
  const admin = async <T>(run: (sql: postgres.Sql) => Promise<T>, database = "postgres"): Promise<T> => {
    const sql = postgres(urlOf(database), { max: 1, onnotice: () => {}, connect_timeout: 5 });
    try {
      return await run(sql);
    } finally {
      await sql.end({ timeout: 1 });
    }
  };
  // PostgreSQL's processes each lead a process group of their own (its children call setsid), so the signal
  // goes to the postmaster and each of its children by pid.
  const signal = (name: NodeJS.Signals) => {
    if (postmaster?.pid === undefined) return;
    for (const pid of [postmaster.pid, ...childrenOf(postmaster.pid)]) {
      try {
        process.kill(pid, name);
      } catch {
        // Gone already.
      }
    }
  };
  const start = async () => {
    const child = spawn(join(POSTGRES_BIN, "postgres"), args, {
      ...asUser,
      cwd: root,
      stdio: "ignore",
      detached: true,
    });
    postmaster = child;
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`private PostgreSQL exited (${code}) while starting`))),
    );
    exited.catch(() => undefined);
    for (let attempt = 0; ; attempt++) {
      try {
        await Promise.race([admin((sql) => sql`SELECT 1`), exited]);
        return;
      } catch (error) {
        if (attempt >= 300 || child.exitCode !== null) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  await start();
  return {
    url,
    port,
    signal,
    start,
    urlOf,
    admin,
    async destroy() {
      signal("SIGCONT");
      signal("SIGKILL");
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** The pids whose parent is `parent` (from /proc; PostgreSQL's processes are all the postmaster's children). */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command may hold spaces and parentheses: the fields after its closing parenthesis are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(ppid) === parent) children.push(Number(entry));
    } catch {
      // Exited while being read.
    }
  }
  return children;
}

function postgresUser(): { uid: number; gid: number } | undefined {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  return uid === undefined || gid === undefined ? undefined : { uid: Number(uid), gid: Number(gid) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}
