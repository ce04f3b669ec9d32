import type { Migration } from "@agent-platform/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { platformMigrations } from "../src/migrations/index.js";
import { ALL_VERSIONS, BACKENDS, request, signToken, startTestServer, type TestServer } from "./helpers.js";

const KNOWN = "Known versions: 2.0.0, 2.3.0, 2.5.0, 2.5.6";

function expectError(result: { status: number; body: unknown }, status: number, errorCode: string) {
  expect(result.status).toBe(status);
  expect(Object.keys(result.body as object).sort()).toEqual(["detail", "error_code"]);
  expect((result.body as { error_code: string }).error_code).toBe(errorCode);
  return (result.body as { detail: string }).detail;
}

describe.each(BACKENDS)("POST /databases/{db_id}/migrate on %s", (backend) => {
  let server: TestServer;
  let writer: string;
  let reader: string;
  const migrate = (query = "", token = writer, id = "default") =>
    request(server, "POST", `/databases/${id}/migrate${query}`, token);
  const status = async () =>
    (await request(server, "GET", "/databases/default/migrations", reader)).body as {
      current: string | null;
      pending: { version: string }[];
    };
  const columns = async (table: string) =>
    (
      await server.sql()<{ name: string }[]>`
        SELECT column_name AS name FROM information_schema.columns WHERE table_name = ${table}`
    ).map((row) => row.name);

  beforeAll(async () => {
    // Two tries, a short wait: a lock timeout answers after two DDL lock timeouts rather than four.
    server = await startTestServer({
      backend,
      env: { MIGRATE_RETRY_ATTEMPTS: "2", MIGRATE_RETRY_MAX_MS: "200" },
    });
    writer = await signToken(["config:write"]);
    reader = await signToken(["config:read"]);
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("200: migrates a fresh database to the latest version when no target is given", async () => {
    const result = await migrate();
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      message: "Database migrated successfully to version 2.5.6",
      db_id: "default",
      from_version: null,
      to_version: "2.5.6",
      direction: "up",
      applied: ALL_VERSIONS,
    });
  });

  it("200: a repeated call is a no-op whose message still names the version", async () => {
    const result = await migrate();
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      message: "Database migrated successfully to version 2.5.6",
      from_version: "2.5.6",
      to_version: "2.5.6",
      direction: "none",
      applied: [],
    });
  });

  it("200: migrates down to a target, then up to a `v`-prefixed one", async () => {
    const down = await migrate("?target_version=2.3.0");
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({
      message: "Database migrated successfully to version 2.3.0",
      direction: "down",
      applied: ["2.5.6", "2.5.0"],
    });
    expect(await status()).toMatchObject({
      current: "2.3.0",
      pending: [{ version: "2.5.0" }, { version: "2.5.6" }],
    });
    expect(await columns("approvals")).toEqual([]);

    const up = await migrate("?target_version=v2.5.6");
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ to_version: "2.5.6", direction: "up", applied: ["2.5.0", "2.5.6"] });
  });

  it("400: a well-formed but unknown target lists the known versions", async () => {
    const detail = expectError(await migrate("?target_version=9.9.9"), 400, "BAD_REQUEST");
    expect(detail).toBe(`Unknown target version '9.9.9'. ${KNOWN}`);
  });

  it("401: missing, foreign-signed and expired tokens", async () => {
    const anonymous = await request(server, "POST", "/databases/default/migrate");
    expect(expectError(anonymous, 401, "UNAUTHENTICATED")).toBe("Authorization header missing");
    const foreign = await signToken(["config:write"], { signedByAnotherKey: true });
    expect(expectError(await migrate("", foreign), 401, "UNAUTHENTICATED")).toMatch(/^Invalid token/);
    const expired = await signToken(["config:write"], { expiresAt: Math.floor(Date.now() / 1000) - 3600 });
    const result = await migrate("", expired);
    expect(expectError(result, 401, "UNAUTHENTICATED")).toBe("Token has expired");
    expect(result.headers.get("www-authenticate")).toMatch(/^Bearer realm="platform", error="invalid_token"/);
  });

  it("403: a valid token without config:write", async () => {
    const detail = expectError(await migrate("", reader), 403, "FORBIDDEN");
    expect(detail).toBe("Insufficient permissions. Required scope(s): config:write");
    expect((await status()).current).toBe("2.5.6");
  });

  it("404: unknown db_id", async () => {
    const detail = expectError(await migrate("", writer, "analytics"), 404, "NOT_FOUND");
    expect(detail).toBe("No database found with id 'analytics'");
  });

  it.each([
    ["?target_version=abc", "target_version"],
    ["?target_version=1..2", "target_version"],
    ["?target_version=", "target_version"],
    ["?target_version=2.5", "target_version"],
  ])("422: malformed %s", async (query, field) => {
    const detail = expectError(await migrate(query), 422, "VALIDATION_ERROR");
    expect(detail).toMatch(new RegExp(`^${field}: `));
  });

  it.each(["bad.id", "-leading-dash", "x".repeat(64)])("422: malformed db_id %s", async (id) => {
    const detail = expectError(await migrate("", writer, id), 422, "VALIDATION_ERROR");
    expect(detail).toMatch(/^db_id: /);
  });

  it("400: drift in the history (changed checksum, unknown applied version, out of order) names it", async () => {
    const sql = server.sql();
    const [original] = await sql<
      { checksum: string }[]
    >`SELECT checksum FROM schema_migrations WHERE version = '2.0.0'`;
    await sql`UPDATE schema_migrations SET checksum = 'edited' WHERE version = '2.0.0'`;
    expect(expectError(await migrate("?target_version=2.5.0"), 400, "BAD_REQUEST")).toMatch(
      /Migration 2\.0\.0 was changed after it was applied/,
    );
    await sql`UPDATE schema_migrations SET checksum = ${original?.checksum ?? ""} WHERE version = '2.0.0'`;

    await sql`INSERT INTO schema_migrations (version, name, checksum, execution_ms) VALUES ('3.0.0', 'future', 'x', 1)`;
    expect(expectError(await migrate(), 400, "BAD_REQUEST")).toMatch(
      /migration 3\.0\.0 applied, but it is not/,
    );
    await sql`DELETE FROM schema_migrations WHERE version = '3.0.0'`;

    const [row] = await sql<{ name: string; checksum: string }[]>`
      DELETE FROM schema_migrations WHERE version = '2.3.0' RETURNING name, checksum`;
    expect(expectError(await migrate(), 400, "BAD_REQUEST")).toMatch(
      /Migration 2\.3\.0 is pending but older than the current version 2\.5\.6/,
    );
    await sql`INSERT INTO schema_migrations (version, name, checksum, execution_ms)
      VALUES ('2.3.0', ${row?.name ?? ""}, ${row?.checksum ?? ""}, 1)`;
    expect((await migrate()).status).toBe(200);
  });

  it("500: a failing migration leaves the database at the version it had", async () => {
    expect((await migrate("?target_version=2.5.0")).status).toBe(200);
    // Duplicates the unique index of 2.5.6 cannot be built over.
    await server.sql()`INSERT INTO knowledge (id, name) VALUES ('k1', 'handbook.pdf'), ('k2', 'handbook.pdf')`;
    const result = await migrate();
    const detail = expectError(result, 500, "INTERNAL_SERVER_ERROR");
    expect(detail).toMatch(/^Failed to migrate database: .*knowledge_linked_to_name_key/);
    expect(detail).not.toMatch(/\n\s+at /);
    expect((await status()).current).toBe("2.5.0");
    expect(await columns("knowledge")).not.toContain("content_hash");

    await server.sql()`DELETE FROM knowledge WHERE id = 'k2'`;
    expect((await migrate()).body).toMatchObject({ to_version: "2.5.6", applied: ["2.5.6"] });
  });

  it("concurrent calls for one database serialize on the migrator's lock and all answer 200", async () => {
    expect((await migrate("?target_version=2.0.0")).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 6 }, () => migrate()));
    expect(results.map((result) => result.status)).toEqual(Array(6).fill(200));
    const applied = results.flatMap((result) => (result.body as { applied: string[] }).applied);
    expect(applied.sort()).toEqual(["2.3.0", "2.5.0", "2.5.6"]);
    for (const result of results) {
      expect(result.body).toMatchObject({ message: "Database migrated successfully to version 2.5.6" });
    }
  });

  // PGlite has one session, so no other session can hold a lock there.
  it.skipIf(backend !== "postgres")(
    "503 with Retry-After when another session holds a table the migration alters, and nothing applied",
    async () => {
      expect((await migrate("?target_version=2.5.0")).status).toBe(200);
      const holder = await server.sql().reserve();
      try {
        await holder`BEGIN`;
        // A reader's lock is enough to block 2.5.6's ALTER TABLE knowledge.
        await holder`LOCK TABLE knowledge IN ACCESS SHARE MODE`;
        const started = performance.now();
        const result = await migrate();
        // The migrator's default ddlLockTimeoutMs on each of MIGRATE_RETRY_ATTEMPTS, then the answer.
        expect(performance.now() - started).toBeGreaterThanOrEqual(10_000);
        const detail = expectError(result, 503, "SERVICE_UNAVAILABLE");
        expect(detail).toMatch(
          /^Migration 2\.5\.6 \(knowledge_content_hash\) could not lock \S*knowledge within 5000 ms \(each of 2 attempts\)/,
        );
        expect(detail).toContain("retry");
        expect(result.headers.get("retry-after")).toBe("5");
      } finally {
        await holder`ROLLBACK`;
        holder.release();
      }
      expect((await status()).current).toBe("2.5.0");
      expect(await columns("knowledge")).not.toContain("content_hash");
      expect((await migrate()).body).toMatchObject({ to_version: "2.5.6", applied: ["2.5.6"] });
    },
    30_000,
  );

  it.skipIf(backend !== "postgres")(
    "200 when the other session lets go while the migrator waits to retry, the wait logged",
    async () => {
      expect((await migrate("?target_version=2.5.0")).status).toBe(200);
      const holder = await server.sql().reserve();
      await holder`BEGIN`;
      await holder`LOCK TABLE knowledge IN ACCESS SHARE MODE`;
      const seen = server.logs.length;
      const retried = (async () => {
        for (;;) {
          const line = server.logs.slice(seen).find((l) => l.includes('"event":"retry"'));
          if (line) return JSON.parse(line) as Record<string, unknown>;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const result = migrate();
      try {
        expect(await retried).toMatchObject({
          level: 40,
          msg: "migration retry",
          db_id: "default",
          version: "2.5.6",
          attempt: 1,
          attempts: 2,
          relation: expect.stringMatching(/knowledge$/),
        });
      } finally {
        await holder`ROLLBACK`;
        holder.release();
      }
      expect((await result).body).toMatchObject({ to_version: "2.5.6", applied: ["2.5.6"] });
    },
    30_000,
  );
});

describe("POST /databases/{db_id}/migrate through an irreversible step", () => {
  let server: TestServer;
  beforeAll(async () => {
    const irreversible: Migration = {
      version: "2.6.0",
      name: "drop_legacy_metrics",
      up: ({ sql }) => sql`ALTER TABLE metrics DROP COLUMN users_count`,
    };
    server = await startTestServer({ migrations: [...platformMigrations(), irreversible] });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("400 and nothing runs", async () => {
    const token = await signToken(["platform:admin"]);
    expect((await request(server, "POST", "/databases/default/migrate", token)).body).toMatchObject({
      to_version: "2.6.0",
    });
    const result = await request(server, "POST", "/databases/default/migrate?target_version=2.5.0", token);
    expect(result.status).toBe(400);
    expect(result.body).toEqual({
      detail: "Migration 2.6.0 has no down migration, so the database cannot be migrated below it",
      error_code: "BAD_REQUEST",
    });
    const status = await request(server, "GET", "/databases/default/migrations", token);
    expect(status.body).toMatchObject({ current: "2.6.0", pending: [] });
  });
});
