import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "./helpers.js";
import { startMain, stopMain } from "./main-process.js";

describe("pnpm start (src/main.ts) without any configuration", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "server-main-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("runs on embedded PostgreSQL, prints a 24 h admin token and a curl line that migrates to 2.5.6", async () => {
    const first = startMain({ PLATFORM_DATA_DIR: dataDir, PORT: "0" });
    try {
      const [, curl = ""] = await first.waitForStderr(/^ {2}(curl .+)$/m);
      const { stdout } = await promisify(execFile)("sh", ["-c", curl]);
      expect(JSON.parse(stdout)).toMatchObject({
        message: "Database migrated successfully to version 2.5.6",
        db_id: "default",
        to_version: "2.5.6",
      });

      const token = curl.match(/Bearer ([\w.-]+)/)?.[1] ?? "";
      const claims = decodeJwt(token);
      expect(claims.scopes).toEqual(["platform:admin"]);
      expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(24 * 60 * 60);

      const logs = first
        .stdout()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { msg: string });
      expect(
        logs.filter((log) => log.msg.startsWith("No DATABASE_URL or DATABASES set: using embedded")),
      ).toHaveLength(1);
      expect(first.stdout()).not.toContain(token);
    } finally {
      expect(await stopMain(first)).toBe(0);
    }

    // The key is reused on the next start: the first token still works, and the data persisted.
    const keyFiles = (await readdir(dataDir)).filter((file) => file.endsWith(".pem"));
    expect(keyFiles).toEqual(["dev-jwt-es256.pem"]);
    const second = startMain({ PLATFORM_DATA_DIR: dataDir, PORT: "0" });
    try {
      const [, url = ""] = await second.waitForStderr(/'(http:\/\/[^']+)\/databases\/default\/migrate'/);
      const [, token] = await first.waitForStderr(/^ {2}(eyJ[\w.-]+)$/m);
      const status = await request({ url }, "GET", "/databases/default/migrations", token);
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ current: "2.5.6", pending: [] });
    } finally {
      expect(await stopMain(second)).toBe(0);
    }
  }, 120_000);
});

describe("startup refusals", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "server-main-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("PLATFORM_ENV=production without a JWT key refuses to start and creates nothing", async () => {
    const child = startMain({ PLATFORM_DATA_DIR: dataDir, PORT: "0", PLATFORM_ENV: "production" });
    expect(await child.exited).toBe(1);
    expect(child.stderr()).toContain(
      "PLATFORM_ENV=production requires a JWT key: set JWT_VERIFICATION_KEY, JWT_JWKS_FILE or JWT_JWKS_URL",
    );
    expect(existsSync(join(dataDir, "dev-jwt-es256.pem"))).toBe(false);
    expect(existsSync(join(dataDir, "default"))).toBe(false);
  }, 60_000);

  it("a bad variable stops startup with a message naming it", async () => {
    const child = startMain({ PLATFORM_DATA_DIR: dataDir, PORT: "seventy", JWT_TOKEN_SOURCE: "query" });
    expect(await child.exited).toBe(1);
    expect(child.stderr()).toContain("PORT: ");
    expect(child.stderr()).toContain("JWT_TOKEN_SOURCE: ");
    expect(child.stderr()).not.toMatch(/\n\s+at /);
  }, 60_000);
});
