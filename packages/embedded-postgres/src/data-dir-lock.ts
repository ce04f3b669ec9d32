import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Another live process (or this one) already has the data directory open. `pid` is NaN when processes kept
 * taking the lock over each other for every attempt, so no single owner could be named.
 */
export class DataDirLockedError extends Error {
  readonly code = "DATA_DIR_LOCKED";
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The embedded PostgreSQL data directory ${dataDir} is already in use by ${Number.isNaN(pid) ? "another process" : `process ${pid}`}${pid === process.pid ? " (this process)" : ""}; stop it or use another data directory`,
    );
    this.name = "DataDirLockedError";
  }
}

/**
 * Who holds a lock: the pid, and on Linux what a reused pid cannot fake, the process's start time (clock
 * ticks since boot, `/proc/<pid>/stat` field 22) and the boot it belongs to (after a reboot the same pid can
 * start at the same tick). `start`/`boot` are null where /proc is absent: there the pid alone is judged.
 */
interface Owner {
  readonly pid: number;
  readonly start: string | null;
  readonly boot: string | null;
}

/** This process as it writes itself into a lock file. */
function self(): Owner {
  return { pid: process.pid, start: startTime(process.pid)?.start ?? null, boot: bootId() };
}

/** A pid's start time and state from `/proc/<pid>/stat`; undefined where the file cannot be read. */
function startTime(pid: number): { start: string; state: string } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Field 2 (the command name) is in parentheses and may itself hold spaces and ")": fields after the last
  // ")" are plain. There, field 3 (state) is the first and field 22 (starttime) the twentieth.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const start = fields[19];
  if (state === undefined || start === undefined || !/^\d+$/.test(start)) return undefined;
  return { start, state };
}

function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

const hasProc = (() => {
  try {
    readFileSync("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
})();

/**
 * Parses a lock file. Anything but an owner record this module writes (a "free" record, empty, garbage, a
 * bare pid, which names no start time to check it by) names no owner.
 */
function parseOwner(text: string): Owner | undefined {
  const trimmed = text.trim();
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { pid, start, boot } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return undefined;
  if (!(start === null || (typeof start === "string" && /^\d+$/.test(start)))) return undefined;
  if (!(boot === null || typeof boot === "string")) return undefined;
  return { pid: pid as number, start, boot };
}

/** Whether `owner` is a running process other than this one (this one is judged by the caller). */
function isRunning(owner: Owner): boolean {
  if (hasProc) {
    if (owner.boot !== null && owner.boot !== bootId()) return false; // written before a reboot
    const now = startTime(owner.pid);
    if (now === undefined) {
      // No /proc entry: gone, or hidden from us (`hidepid`); only kill(0) tells them apart, and a process we
      // cannot see is one we cannot prove dead.
      return signalable(owner.pid);
    }
    // A zombie (or a dead task) has exited: it holds nothing, even before its parent reaps it.
    if (now.state === "Z" || now.state === "X" || now.state === "x") return false;
    // A pid reused by another process: its start time differs.
    return owner.start === now.start;
  }
  return signalable(owner.pid);
}

function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** The lock directory, replacing a file in its place (the lock file of earlier versions names no one). */
function lockDirectory(dir: string): void {
  try {
    mkdirSync(dir);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (statSync(dir).isDirectory()) return;
  }
  unlinkQuietly(dir);
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

const GENERATION = /^\d{1,15}$/;

/** The generation files in `dir`, highest first. */
function generations(dir: string): number[] {
  return readdirSync(dir)
    .filter((name) => GENERATION.test(name))
    .map(Number)
    .sort((a, b) => b - a);
}

// Lock directories this process holds. Where there is no start time to tell them apart, a lock naming this
// process's pid but not listed here was left by an earlier process with the same pid (a restarted container,
// where the app is pid 1 again).
const heldHere = new Set<string>();

const ATTEMPTS = 20;

/**
 * Takes the lock directory `dir` for `dataDir`, or throws `DataDirLockedError` naming the live owner.
 *
 * The directory holds numbered generation files, and only the highest counts: it names the owner, or says
 * the lock is free. To take the lock, a process judges the highest generation `n` (free, or its owner gone,
 * its pid reused, a zombie, or the file empty or unreadable) and links its own complete record to `n + 1`:
 * `link` fails if that name exists, so of the processes that judged `n` exactly one gets `n + 1`, and nobody
 * ever reads a partial file. Nothing is ever deleted to take over, so no process can delete a lock another
 * has just taken; numbers only grow (a release links a "free" record above its own), and a process that
 * linked a generation that is not the highest any more (it judged an old listing) steps back and retries.
 * Generations below the holder's are removed by the holder. Returns the release function.
 */
export function lockDataDir(dir: string, dataDir: string): () => void {
  if (heldHere.has(dir)) throw new DataDirLockedError(dataDir, process.pid);
  lockDirectory(dir);
  const me = self();
  const unique = `${process.pid}-${randomBytes(6).toString("hex")}`;
  const temp = join(dir, `tmp-${unique}`);
  writeFileSync(temp, `${JSON.stringify(me)}\n`, { flag: "wx", mode: 0o644 });
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const [highest = 0] = generations(dir);
      if (highest > 0) {
        const text = readOrUndefined(join(dir, String(highest)));
        if (text === undefined) continue; // removed meanwhile: list again
        const owner = parseOwner(text);
        const held =
          owner !== undefined &&
          (owner.pid === me.pid
            ? me.start === null
              ? heldHere.has(dir)
              : owner.start === me.start // this very process, through another path to the same directory
            : isRunning(owner));
        if (held) throw new DataDirLockedError(dataDir, (owner as Owner).pid);
      }
      const mine = join(dir, String(highest + 1));
      try {
        linkSync(temp, mine);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
        throw error;
      }
      if (generations(dir)[0] !== highest + 1) {
        unlinkQuietly(mine);
        continue;
      }
      for (const older of generations(dir).filter((n) => n <= highest))
        unlinkQuietly(join(dir, String(older)));
      removeLeftovers(dir);
      heldHere.add(dir);
      return () => release(dir, highest + 1);
    }
  } finally {
    unlinkQuietly(temp);
  }
  throw new DataDirLockedError(dataDir, Number.NaN);
}

/** Temporary records of processes that died between writing and linking them (a live one's stay). */
function removeLeftovers(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = Number(/^tmp-(\d+)-[0-9a-f]+$/.exec(name)?.[1]);
    if (Number.isSafeInteger(pid) && pid !== process.pid && !signalable(pid)) unlinkQuietly(join(dir, name));
  }
}

const FREE = `${JSON.stringify({ free: true })}\n`;

/** Links a "free" record above the holder's generation, then removes the holder's. */
function release(dir: string, generation: number): void {
  heldHere.delete(dir);
  const temp = join(dir, `tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  try {
    writeFileSync(temp, FREE, { flag: "wx" });
    linkSync(temp, join(dir, String(generation + 1)));
    unlinkQuietly(join(dir, String(generation)));
  } catch {
    // Nothing more to do: a lock whose holder is gone is taken over by the next start anyway.
  } finally {
    unlinkQuietly(temp);
  }
}
