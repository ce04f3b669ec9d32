import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Migration } from "@agent-platform/migrator";
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { inject } from "vitest";
import { type Backend, createTestDatabase } from "./databases.js";

export * from "./databases.js";

import { loadConfig } from "../src/config.js";
import { type RunningServer, startServer } from "../src/server.js";

const keys = (async () => {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  return { privateKey, publicPem: await exportSPKI(publicKey) };
})();
const otherKeys = generateKeyPair("ES256");

export async function publicKeyPem(): Promise<string> {
  return (await keys).publicPem;
}

export interface TokenOptions {
  expiresAt?: number;
  signedByAnotherKey?: boolean;
  /** More claims (`cnf` for a DPoP-bound token). */
  claims?: Record<string, unknown>;
}

/** A token as an identity provider would issue it, signed in the test with jose. */
export async function signToken(scopes: readonly string[], options: TokenOptions = {}): Promise<string> {
  const key = options.signedByAnotherKey ? (await otherKeys).privateKey : (await keys).privateKey;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...options.claims, scopes })
    .setProtectedHeader({ alg: "ES256" })
    .setSubject("test-user")
    .setIssuedAt(now - 60)
    .setExpirationTime(options.expiresAt ?? now + 600)
    .sign(key);
}

export { closedPort } from "./ports.js";

export interface TestServer extends RunningServer {
  readonly dataDir: string;
  readonly logs: string[];
  /** Stops the server and removes its data dir and database. */
  cleanup(): Promise<void>;
}

export interface TestServerOptions {
  backend?: Backend;
  env?: Record<string, string>;
  migrations?: readonly Migration[];
}

/** The environment every test server starts from: loopback, a random port, the test key. */
export async function testServerEnv(dataDir: string): Promise<Record<string, string>> {
  return {
    HOST: "127.0.0.1",
    PORT: "0",
    PLATFORM_ENV: "test",
    PLATFORM_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    JWT_VERIFICATION_KEY: await publicKeyPem(),
    JWT_ALGORITHM: "ES256",
  };
}

/** The real server in-process on a random port, with the test key configured and logs captured. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "server-test-"));
  const database = options.backend === "postgres" ? await createTestDatabase() : undefined;
  if (database === undefined && options.env?.DATABASES === undefined) {
    await cp(inject("pgliteTemplateDir"), join(dataDir, "default"), { recursive: true });
  }
  const logs: string[] = [];
  const config = loadConfig({
    ...(await testServerEnv(dataDir)),
    SHUTDOWN_TIMEOUT_MS: "5000",
    ...(database === undefined ? {} : { DATABASE_URL: database.url }),
    ...options.env,
  });
  const server = await startServer(config, {
    ...(options.migrations === undefined ? {} : { migrations: options.migrations }),
    logDestination: { write: (line: string) => void logs.push(line) },
  });
  return {
    ...server,
    dataDir,
    logs,
    async cleanup() {
      await server.stop();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export async function request(
  server: { url: string },
  method: string,
  path: string,
  token?: string,
): Promise<HttpResult> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

export const ALL_VERSIONS = ["2.0.0", "2.3.0", "2.5.0", "2.5.6"];

/**
 * The real server with no JWT key configured, so it uses (and creates) the development key of its data
 * dir and prints a development token, as under `pnpm start`.
 */
export async function startDevKeyServer(): Promise<
  RunningServer & { dataDir: string; cleanup(): Promise<void> }
> {
  const dataDir = await mkdtemp(join(tmpdir(), "server-dev-key-"));
  await cp(inject("pgliteTemplateDir"), join(dataDir, "default"), { recursive: true });
  const server = await startServer(
    loadConfig({ PORT: "0", PLATFORM_ENV: "development", PLATFORM_DATA_DIR: dataDir, LOG_LEVEL: "silent" }),
  );
  return {
    ...server,
    dataDir,
    async cleanup() {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
