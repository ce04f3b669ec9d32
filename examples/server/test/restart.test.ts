import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { publicKeyPem, request, signToken, testServerEnv } from "./helpers.js";
import { type Child, startMain, stopMain } from "./main-process.js";

// Every child is started in its own process group; whatever a failed test leaves running is killed.
const running: Child[] = [];
const sleepers: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((child) => child.killTree()));
  for (const sleeper of sleepers.splice(0)) sleeper.kill("SIGKILL");
});

function start(env: Record<string, string>, options: { tree?: boolean } = {}): Child {
  const child = startMain(env, options);
  running.push(child);
  return child;
}

/** The URL a started server logs, or the reason it did not start. */
async function listening(child: Child): Promise<string> {
  const [, url = ""] = await child.waitForStdout(/"msg":"Listening on (http:\/\/[^"]+)"/);
  return url;
}

/** The one line a refused start prints; anything more (a stack trace, a second line) fails. */
async function refusal(child: Child): Promise<string> {
  expect(await child.exited).toBe(1);
  const lines = child.stderr().trimEnd().split("\n");
  expect(lines, child.stderr()).toHaveLength(1);
  expect(child.stderr()).not.toMatch(/\bat .+:\d+:\d+/);
  return lines[0] as string;
}

describe("the embedded database after a crash and under a double start", () => {
  let dataDir: string;
  let env: Record<string, string>;
  let admin: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "server-restart-"));
    await cp(inject("pgliteTemplateDir"), join(dataDir, "default"), { recursive: true });
    env = { ...(await testServerEnv(dataDir)), LOG_LEVEL: "info" };
    admin = await signToken(["platform:admin"]);
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("starts again at once after a SIGKILL of the whole server tree, 10 rounds (5 with the pid reused), data intact", async () => {
    for (let round = 0; round < 10; round++) {
      const server = start(env, { tree: true });
      const url = await listening(server);
      if (round === 0) {
        const migrated = await request({ url }, "POST", "/databases/default/migrate", admin);
        expect(migrated.status).toBe(200);
      }
      const status = await request({ url }, "GET", "/databases/default/migrations", admin);
      expect(status.body, `round ${round}`).toMatchObject({ current: "2.5.6", pending: [] });
      await server.killTree();
      // Every other round, the dead server's pid now belongs to a live unrelated process (as after a reboot,
      // or in a container where every start is pid 1): its record is made to name a running `sleep`.
      if (round % 2 === 1 && existsSync("/proc/self/stat")) {
        const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
        sleepers.push(sleeper);
        const lockDir = join(dataDir, "default", "agent-platform-embedded.lock");
        const [highest] = (await readdir(lockDir))
          .filter((name) => /^\d+$/.test(name))
          .sort((a, b) => Number(b) - Number(a));
        const record = JSON.parse(await readFile(join(lockDir, highest as string), "utf8"));
        expect(record.pid).not.toBe(sleeper.pid);
        await writeFile(join(lockDir, highest as string), JSON.stringify({ ...record, pid: sleeper.pid }));
      }
    }
  }, 300_000);

  it("two servers started at the same instant: exactly one runs, the other says why in one line, 5 rounds", async () => {
    for (let round = 0; round < 5; round++) {
      const pair = [start(env), start(env)];
      const outcomes = await Promise.all(
        pair.map((child) =>
          Promise.race([
            listening(child).then((url) => ({ child, url })),
            child.exited.then(() => ({ child, url: undefined })),
          ]),
        ),
      );
      const winners = outcomes.filter((outcome) => outcome.url !== undefined);
      expect(winners, pair.map((child) => child.stderr()).join("\n")).toHaveLength(1);
      const winner = winners[0] as { child: Child; url: string };
      const loser = pair.find((child) => child !== winner.child) as Child;
      expect(await refusal(loser)).toMatch(
        /^The server did not start\. The embedded database \S+ is in use by process \d+: stop that server, or set PLATFORM_DATA_DIR to another directory \(or DATABASE_URL to use PostgreSQL\)$/,
      );
      const status = await request({ url: winner.url }, "GET", "/databases/default/migrations", admin);
      expect(status.status).toBe(200);
      // A crash in every other round, so the next pair also races over a stale lock.
      if (round % 2 === 0) await winner.child.killTree();
      else expect(await stopMain(winner.child)).toBe(0);
    }
  }, 300_000);
});

describe("every refusal at startup is one line naming the cause and the fix, exit 1", () => {
  let dataDir: string;
  let busy: Server;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "server-refusals-"));
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    busy.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("port in use", async () => {
    const port = (busy.address() as { port: number }).port;
    const child = start({
      ...(await testServerEnv(dataDir)),
      PORT: String(port),
      DATABASE_URL: "postgres://127.0.0.1:1/x",
    });
    expect(await refusal(child)).toBe(
      `The server did not start. 127.0.0.1:${port} is already in use; set PORT (and HOST) to a free one`,
    );
  });

  it("bad configuration, however many variables are wrong", async () => {
    const child = start({
      PLATFORM_DATA_DIR: dataDir,
      PORT: "seventy",
      JWT_TOKEN_SOURCE: "query",
      DATABASE_URL: "mysql://x",
    });
    const line = await refusal(child);
    expect(line).toMatch(/^The server did not start\. Invalid configuration: /);
    for (const name of ["PORT: ", "JWT_TOKEN_SOURCE: ", "DATABASE_URL"]) expect(line).toContain(name);
  });

  it("the inbox database unreachable (a closed port), without its password in the line", async () => {
    const child = start({
      ...(await testServerEnv(dataDir)),
      PORT: "0",
      DATABASE_URL: "postgres://postgres:hunter2-secret@127.0.0.1:1/x",
    });
    const line = await refusal(child);
    expect(line).toMatch(
      /^The server did not start\. the inbox database 'default' \(postgres:\/\/postgres:\*+@127\.0\.0\.1:1\/x\) does not answer: .*ECONNREFUSED.*\. Start PostgreSQL or fix DATABASE_URL/,
    );
    expect(line).not.toContain("hunter2");
  });

  it("production without a key", async () => {
    const child = start({ PLATFORM_DATA_DIR: dataDir, PORT: "0", PLATFORM_ENV: "production" });
    expect(await refusal(child)).toContain("set JWT_VERIFICATION_KEY, JWT_JWKS_FILE or JWT_JWKS_URL");
  });

  it("an embedded data directory that cannot be opened (a file where the directory should be)", async () => {
    const blocked = join(dataDir, "blocked");
    await writeFile(blocked, "not a directory");
    const child = start({ ...(await testServerEnv(blocked)), JWT_VERIFICATION_KEY: await publicKeyPem() });
    const line = await refusal(child);
    expect(line).toMatch(/^The server did not start\. .*blocked/);
  });
});
