import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "@agent-platform/embedded-postgres";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { testServerEnv } from "../helpers.js";
import { type Child, startMain, stopMain } from "../main-process.js";
import { type GraphStub, startGraphStub } from "../messaging/support/graph-stub.js";
import { channelEnv } from "../messaging/support/whatsapp.js";
import { ANSWER_BOUND_MS, RESUME_BOUND_MS, steadyLoad } from "./load.js";

/** A tmpfs of `sizeMiB` at a new directory, or why one cannot be mounted here (not root, no permission). */
function mountTmpfs(dir: string, sizeMiB: number): string | undefined {
  if (process.platform !== "linux") return "tmpfs needs Linux";
  if (process.getuid?.() !== 0) return "mounting a tmpfs needs root";
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m`, "tmpfs", dir], { stdio: "pipe" });
    return undefined;
  } catch (error) {
    return `mount -t tmpfs failed: ${(error as { stderr?: Buffer }).stderr?.toString().trim() ?? error}`;
  }
}

function unmount(dir: string): void {
  try {
    execFileSync("umount", ["-l", dir], { stdio: "ignore" });
  } catch {
    // Not mounted.
  }
}

/** Fills the file system holding `dir` with files of 1 MiB, then smaller ones, until it refuses (ENOSPC). */
async function fill(dir: string): Promise<void> {
  await mkdir(join(dir, "filler"), { recursive: true });
  for (const size of [1 << 20, 1 << 12]) {
    for (let n = 0; n < 10_000; n++) {
      try {
        await writeFile(join(dir, "filler", `${size}-${n}`), Buffer.alloc(size, 1));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
        throw error;
      }
    }
  }
}

const running: Child[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((child) => child.killTree()));
});

function start(env: Record<string, string>): Child {
  const child = startMain(env);
  running.push(child);
  return child;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the embedded database's disk", () => {
  let root: string;
  const mounts: string[] = [];
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "server-disk-full-"));
  });
  afterAll(async () => {
    for (const dir of mounts) unmount(dir);
    await rm(root, { recursive: true, force: true });
  });

  async function tmpfs(name: string, sizeMiB: number): Promise<string | undefined> {
    const dir = join(root, name);
    await mkdir(dir);
    const refused = mountTmpfs(dir, sizeMiB);
    if (refused !== undefined) {
      console.warn(`disk-full test skipped: ${refused}`);
      return undefined;
    }
    mounts.push(dir);
    return dir;
  }

  it("full at the first start: one line naming the cause, the directory and the fix", async (context) => {
    const dir = await tmpfs("first-start", 4);
    if (dir === undefined) return context.skip();
    const server = start({ ...(await testServerEnv(dir)), LOG_LEVEL: "info" });
    expect(await server.exited).toBe(1);
    const lines = server.stderr().trimEnd().split("\n");
    expect(lines, server.stderr()).toHaveLength(1);
    expect(lines[0]).toBe(
      `The server did not start. No space left on the device holding PLATFORM_DATA_DIR (${dir}): free space on it, or set PLATFORM_DATA_DIR to a directory on a disk with room (or DATABASE_URL to use PostgreSQL)`,
    );
  }, 120_000);

  it("fills while deliveries arrive: each answered, one line names the directory, storing resumes once space is freed", async (context) => {
    // The template (about 40 MiB) plus the 64 MiB the embedded database keeps free, and room to fill.
    const dir = await tmpfs("filling", 160);
    if (dir === undefined) return context.skip();
    await cp(inject("pgliteTemplateDir"), join(dir, "default"), { recursive: true });
    const graph: GraphStub = await startGraphStub();
    try {
      const server = start({ ...(await testServerEnv(dir)), LOG_LEVEL: "info", ...channelEnv(graph.url) });
      const [, url = ""] = await server.waitForStdout(/"msg":"Listening on (http:\/\/[^"]+)"/);
      let stopAt = Number.POSITIVE_INFINITY;
      const load = steadyLoad({
        urls: [url],
        perSecond: 20,
        until: () => performance.now() >= stopAt,
        patienceMs: 15_000,
        maxDeliveries: 300,
        prefix: "disk",
      });
      await sleep(1_000);
      await fill(dir);
      await sleep(2_000);
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(503);
      await rm(join(dir, "filler"), { recursive: true, force: true });
      const freedAt = performance.now();
      stopAt = freedAt + 2_500;
      const sent = await load;

      const refused = sent.filter((each) => each.status === 503);
      const firstStoredAfter = sent.find((each) => each.sentAt >= freedAt && each.status === 200);
      console.info(
        `disk full: ${sent.length} deliveries, ${refused.length} refused (503), slowest answer ${Math.round(Math.max(...sent.map((each) => each.ms)))} ms, ` +
          `first stored ${firstStoredAfter === undefined ? "-" : Math.round(firstStoredAfter.sentAt - freedAt)} ms after space was freed`,
      );
      for (const each of sent) {
        expect([200, 503], each.id).toContain(each.status);
        expect(each.ms, each.id).toBeLessThan(ANSWER_BOUND_MS);
      }
      expect(refused.length).toBeGreaterThan(0);
      // Recovered by itself: the process is still there, and everything sent a second after the space came back is stored.
      expect(server.process.exitCode).toBeNull();
      const late = sent.filter((each) => each.sentAt >= freedAt + RESUME_BOUND_MS && each.status !== 200);
      expect(late.map((each) => each.id)).toEqual([]);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      // One line names the cause and the directory when it starts (each refused delivery's own line quotes it
      // as its error), and one says it is over.
      const messages = server
        .stdout()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => String(JSON.parse(line).msg));
      const full = messages.filter((msg) =>
        msg.startsWith(`No space left on the device holding PLATFORM_DATA_DIR (${dir})`),
      );
      expect(full, server.stdout().slice(-2_000)).toHaveLength(1);
      expect(full[0]).toMatch(/it refuses statements, and deliveries get 503, until space is freed there$/);
      expect(
        messages.filter((msg) => msg.startsWith("Space freed on the device holding PLATFORM_DATA_DIR")),
      ).toHaveLength(1);

      // Nothing acknowledged is lost: every delivery answered 200 is in the inbox.
      expect(await stopMain(server)).toBe(0);
      const embedded = await startEmbeddedPostgres({ dataDir: join(dir, "default") });
      try {
        const stored = new Set(
          (await embedded.sql<{ message_id: string }[]>`SELECT message_id FROM messaging.inbox`).map(
            (row) => row.message_id,
          ),
        );
        const lost = sent.filter((each) => each.status === 200 && !stored.has(each.id));
        expect(lost.map((each) => each.id)).toEqual([]);
      } finally {
        await embedded.stop();
      }
    } finally {
      await graph.close();
    }
  }, 180_000);
});
