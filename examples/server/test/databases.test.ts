import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closedPort,
  createTestDatabase,
  request,
  signToken,
  startTestServer,
  TEST_DATABASE_URL,
  type TestServer,
} from "./helpers.js";

describe("a database that is down", () => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer({
      env: { DATABASES: `offline=postgres://postgres@127.0.0.1:${await closedPort()}/platform` },
    });
    admin = await signToken(["platform:admin"]);
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("GET /health answers 503 naming it", async () => {
    const result = await request(server, "GET", "/health");
    expect(result.status).toBe(503);
    expect(result.body).toEqual({
      // `offline` is the inbox database too (the first one DATABASES names).
      detail:
        "Databases not answering: offline; the inbox cannot store deliveries: the database refuses connections",
      error_code: "SERVICE_UNAVAILABLE",
    });
  });

  it("migrating it answers 500 with the reason", async () => {
    const result = await request(server, "POST", "/databases/offline/migrate", admin);
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ error_code: "INTERNAL_SERVER_ERROR" });
    expect((result.body as { detail: string }).detail).toMatch(/^Failed to migrate database: .*ECONNREFUSED/);
  });
});

describe.skipIf(TEST_DATABASE_URL === undefined)("DATABASES with two real PostgreSQL databases", () => {
  let server: TestServer;
  let admin: string;
  const dropAll: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    const eu = await createTestDatabase();
    const us = await createTestDatabase();
    dropAll.push(eu.drop, us.drop);
    const offline = `postgres://postgres@127.0.0.1:${await closedPort()}/platform`;
    server = await startTestServer({ env: { DATABASES: `eu=${eu.url},us=${us.url},offline=${offline}` } });
    admin = await signToken(["platform:admin"]);
  });
  afterAll(async () => {
    await server?.cleanup();
    for (const drop of dropAll) await drop();
  });

  it("GET /health names only the database that is down", async () => {
    const result = await request(server, "GET", "/health");
    expect(result.status).toBe(503);
    expect(result.body).toEqual({
      detail: "Databases not answering: offline",
      error_code: "SERVICE_UNAVAILABLE",
    });
  });

  it("migrates each database on its own; /databases/all/migrate answers 207 with each result", async () => {
    const eu = await request(server, "POST", "/databases/eu/migrate?target_version=2.5.0", admin);
    expect(eu.body).toMatchObject({ db_id: "eu", to_version: "2.5.0" });
    const us = await request(server, "GET", "/databases/us/migrations", admin);
    expect(us.body).toMatchObject({ db_id: "us", current: null });

    const all = await request(server, "POST", "/databases/all/migrate", admin);
    expect(all.status).toBe(207);
    const body = all.body as { message: string; results: Record<string, Record<string, unknown>> };
    expect(body.message).toBe("Failed to migrate: offline");
    expect(body.results.eu).toMatchObject({ status: 200, from_version: "2.5.0", applied: ["2.5.6"] });
    expect(body.results.us).toMatchObject({ status: 200, from_version: null, to_version: "2.5.6" });
    expect(body.results.offline).toMatchObject({ status: 500, error_code: "INTERNAL_SERVER_ERROR" });
    expect(String(body.results.offline?.detail)).toMatch(/^Failed to migrate database: /);

    for (const id of ["eu", "us"]) {
      const status = await request(server, "GET", `/databases/${id}/migrations`, admin);
      expect(status.body).toMatchObject({ current: "2.5.6", pending: [] });
    }
  });
});

describe.skipIf(TEST_DATABASE_URL === undefined)(
  "/databases/all/migrate when every database succeeds",
  () => {
    let server: TestServer;
    const dropAll: (() => Promise<void>)[] = [];
    beforeAll(async () => {
      const a = await createTestDatabase();
      const b = await createTestDatabase();
      dropAll.push(a.drop, b.drop);
      server = await startTestServer({ env: { DATABASE_URL: a.url, DATABASES: `b=${b.url}` } });
    });
    afterAll(async () => {
      await server?.cleanup();
      for (const drop of dropAll) await drop();
    });

    it("answers 200 with both results", async () => {
      const token = await signToken(["config:write"]);
      const result = await request(server, "POST", "/databases/all/migrate", token);
      expect(result.status).toBe(200);
      expect(result.body).toMatchObject({
        message: "All databases migrated successfully to version 2.5.6",
        results: { default: { status: 200, to_version: "2.5.6" }, b: { status: 200, to_version: "2.5.6" } },
      });
    });
  },
);
