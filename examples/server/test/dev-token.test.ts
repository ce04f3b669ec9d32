import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startDevKeyServer } from "./helpers.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..", "..", "..");

/** `pnpm dev-token ...` at the repository root, as a user types it. */
async function devToken(args: string[], env: Record<string, string>) {
  // Only what the command needs: no JWT_* or PLATFORM_* from the environment the tests run in.
  const base = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
  try {
    const { stdout, stderr } = await run("pnpm", ["dev-token", ...args], {
      cwd: ROOT,
      env: { ...base, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("pnpm dev-token", () => {
  let server: Awaited<ReturnType<typeof startDevKeyServer>>;
  let dataDir: string;
  beforeAll(async () => {
    server = await startDevKeyServer();
    dataDir = server.dataDir;
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("prints only a token with the scopes, subject and lifetime asked for, which the server accepts", async () => {
    const result = await devToken(["--scopes", "config:read,agents:read", "--sub", "alice", "--ttl", "2h"], {
      PLATFORM_DATA_DIR: dataDir,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const token = result.stdout.trim();
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      scopes: ["config:read", "agents:read"],
      sub: "alice",
      aud: "agent-platform",
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(7200);

    expect((await request(server, "GET", "/databases/default/migrations", token)).status).toBe(200);
    // The scopes are the ones asked for, no more.
    expect((await request(server, "POST", "/databases/default/migrate", token)).status).toBe(403);
  });

  it.each([
    [{ PLATFORM_ENV: "production" }, /refused: PLATFORM_ENV=production/],
    [{ JWT_VERIFICATION_KEY: "a-real-shared-secret-0123456789abcdef" }, /refused: a JWT key is configured/],
    [{ JWT_JWKS_URL: "https://idp.example/jwks.json" }, /refused: a JWT key is configured/],
  ])("refuses with %j: exit 1, a clear message, nothing on stdout", async (env, message) => {
    const result = await devToken(["--scopes", "config:read"], { PLATFORM_DATA_DIR: dataDir, ...env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });

  it.each([
    [["--scopes", "not a scope"], /not a scope of the form/],
    [["--scopes", "a:b", "--ttl", "99d"], /--ttl must be/],
    [["--sub", "alice"], /--scopes is required/],
    [["--scopes", "a:b", "--unknown"], /Unknown option '--unknown'/],
  ])("refuses bad arguments %j", async (args, message) => {
    const result = await devToken(args, { PLATFORM_DATA_DIR: dataDir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });
});
