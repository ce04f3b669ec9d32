import { type ChildProcess, spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresReplayStore } from "../src/index.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { dpopClient } from "./fixtures/dpop-client.js";

// RFC 9449 §11.1 across replicas: two server processes share a PostgreSQL replay store, and the same
// proof sent to both (at once, and one after the other) is accepted exactly once.

const databaseUrl = process.env.TEST_DATABASE_URL;
if (databaseUrl === undefined)
  console.warn("dpop-replicas.test.ts: TEST_DATABASE_URL unset, PostgreSQL tests skipped");
const TSX = join(import.meta.dirname, "..", "..", "..", "node_modules", ".bin", "tsx");
const REPLICA = join(import.meta.dirname, "fixtures", "dpop-replica.ts");

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function startReplica(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(TSX, [REPLICA], {
    env: { ...process.env, ...env, REPLICA_PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`replica exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

describe.skipIf(databaseUrl === undefined)("PostgreSQL replay store shared by two processes", () => {
  const schema = `dpop_${process.pid}_${Date.now()}`;
  const table = `${schema}.replay`;
  let sql: postgres.Sql;
  let as: AuthorizationServer;
  const replicas: { url: string; child: ChildProcess }[] = [];

  beforeAll(async () => {
    sql = postgres(databaseUrl as string, { max: 2, onnotice: () => {} });
    await sql.unsafe(`CREATE SCHEMA ${schema}`);
    as = await startAuthorizationServer();
    const env = {
      REPLICA_DATABASE_URL: databaseUrl as string,
      REPLICA_ISSUER: as.issuer,
      REPLICA_JWKS_URL: as.jwksUrl,
      REPLICA_TABLE: table,
    };
    replicas.push(...(await Promise.all([startReplica(env), startReplica(env)])));
  }, 60_000);
  afterAll(async () => {
    for (const { child } of replicas) child.kill("SIGTERM");
    await as?.close();
    await sql?.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await sql?.end();
  });

  it("accepts the same proof once across both replicas", async () => {
    const client = await dpopClient("ES256");
    const proofForToken = await client.proof({ method: "POST", url: as.tokenUrl });
    const { access_token: token } = (await (
      await fetch(as.tokenUrl, { method: "POST", headers: { dpop: proofForToken } })
    ).json()) as { access_token: string };
    const [a, b] = replicas as unknown as [{ url: string }, { url: string }];
    for (let round = 0; round < 5; round++) {
      // htu names one URL; the replicas sit behind one name in production, so both are asked for it
      // with a Host header for the shared origin.
      const proof = await client.proof({
        method: "GET",
        url: "http://api.example/agents",
        accessToken: token,
      });
      const send = (url: string) =>
        new Promise<string>((resolve, reject) => {
          const headers = { host: "api.example", authorization: `DPoP ${token}`, dpop: proof };
          const request = httpRequest(`${url}/agents`, { headers }, (response) => {
            let text = "";
            response.on("data", (chunk: Buffer) => {
              text += chunk.toString();
            });
            response.on("end", () => resolve(`${response.statusCode} ${text}`));
          });
          request.on("error", reject);
          request.end();
        });
      const statuses = await Promise.all([send(a.url), send(b.url), send(a.url), send(b.url)]);
      expect(statuses.map((status) => status.slice(0, 3)).sort()).toEqual(["200", "401", "401", "401"]);
    }
    const rows = await sql.unsafe(`SELECT count(*)::int AS n FROM ${table}`);
    expect(rows[0]?.n).toBe(5);
  });

  it("purges expired rows and refuses a bad table name", async () => {
    const store = new PostgresReplayStore({
      query: (text, params) => sql.unsafe(text, params as never[]),
      table: `${schema}.purged`,
      purgeEveryMs: 0,
    });
    expect(await store.add("k0", Date.now() - 1000)).toBe(true);
    expect(await store.add("k1", Date.now() + 60_000)).toBe(true);
    expect(await store.add("k1", Date.now() + 60_000)).toBe(false);
    await new Promise((done) => setTimeout(done, 200));
    const rows = await sql.unsafe(`SELECT key FROM ${schema}.purged ORDER BY key`);
    expect(rows.map((row) => row.key)).toEqual(["k1"]);
    expect(() => new PostgresReplayStore({ query: async () => [], table: "x; DROP TABLE y" })).toThrow(
      /lower-case/,
    );
  });
});
