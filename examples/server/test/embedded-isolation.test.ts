// Issue 11 §4: the embedded database must be reachable by the server only. A separate process plays the
// local attacker: it connects to everything the server listens on and holds those connections open.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { afterEach, describe, expect, it } from "vitest";
import type { ProbeResult } from "./fixtures/postgres-probe.js";
import { request, signToken } from "./helpers.js";
import { type ChildServer, spawnServer } from "./messaging/support/child-server.js";

const PROBE = fileURLToPath(new URL("./fixtures/postgres-probe.ts", import.meta.url));

/** Starts the probe against `pid`; resolves with what it found once it holds its connections. */
async function startProbe(pid: number): Promise<{ results: ProbeResult[]; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", PROBE, String(pid)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`probe exited with ${code}`);
  });
  const [line] = await Promise.race([
    once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), "line"),
    exited,
  ]);
  return { results: JSON.parse(line as string) as ProbeResult[], child };
}

describe.runIf(process.platform === "linux")("the embedded database seen from another local process", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("the probe does find a PGlite served on a socket (so its silence below means something)", async () => {
    const db = await PGlite.create();
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 });
    await server.start();
    cleanups.push(async () => {
      await server.stop();
      await db.close();
    });
    const probe = await startProbe(process.pid);
    cleanups.push(async () => void probe.child.kill("SIGKILL"));
    const port = Number(server.getServerConn().split(":")[1]);
    expect(probe.results).toContainEqual(
      expect.objectContaining({ endpoint: { kind: "tcp", address: "127.0.0.1", port }, answer: "postgres" }),
    );
  }, 120_000);

  it("finds nothing of the server that speaks PostgreSQL, and the server keeps serving while it holds on", async () => {
    const server: ChildServer = await spawnServer({});
    cleanups.push(() => server.kill("SIGKILL"));
    const probe = await startProbe(server.child.pid as number);
    cleanups.push(async () => void probe.child.kill("SIGKILL"));

    // The enumeration works: it found the HTTP port, and that is all there is.
    const httpPort = Number(new URL(server.url).port);
    expect(probe.results.map((r) => r.endpoint)).toEqual([
      { kind: "tcp", address: "127.0.0.1", port: httpPort },
    ]);
    expect(probe.results.filter((r) => r.answer === "postgres")).toEqual([]);

    // With the probe still connected to everything it could find, the database answers the server.
    expect((await request(server, "GET", "/health")).status).toBe(200);
    const migrate = await request(
      server,
      "POST",
      "/databases/default/migrate",
      await signToken(["config:write"]),
    );
    expect(migrate.status).toBe(200);
    expect(probe.child.exitCode).toBeNull();
    // The child server runs initdb and starts tsx: seconds, and far more on a loaded machine.
  }, 180_000);
});
