import type { Migration, MigrationStatus } from "@agent-platform/migrator";
import { afterEach, describe, expect, it } from "vitest";
import { pendingLine } from "../src/migrate.js";
import { platformMigrations } from "../src/migrations/index.js";
import { BACKENDS, request, signToken, startTestServer, type TestServer } from "./helpers.js";

/** The JSON log records of `server` whose message is `message`. */
function records(server: TestServer, message: string): Record<string, unknown>[] {
  return server.logs
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record.msg === message);
}

async function eventually<T>(read: () => T, ok: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("pendingLine", () => {
  const status = (current: string | null, pending: string[]) =>
    ({ current, pending: pending.map((version) => ({ version, name: "x" })) }) as unknown as MigrationStatus;

  it("names the current version, each pending one and the request that applies them", () => {
    expect(pendingLine("default", status("2.3.0", ["2.5.0", "v2.5.6"]))).toBe(
      "database default is at 2.3.0; 2.5.0, 2.5.6 pending: POST /databases/default/migrate",
    );
    expect(pendingLine("us", status(null, ["2.0.0"]))).toBe(
      "database us has no migration applied; 2.0.0 pending: POST /databases/us/migrate",
    );
    expect(pendingLine("default", status("2.5.6", []))).toBeUndefined();
  });
});

describe.each(BACKENDS)("pending migrations at startup on %s", (backend) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.cleanup();
    server = undefined;
  });

  it("logs one line naming what is pending, and /health stays 200", async () => {
    server = await startTestServer({ backend });
    const expected =
      "database default has no migration applied; 2.0.0, 2.3.0, 2.5.0, 2.5.6 pending: POST /databases/default/migrate";
    const lines = await eventually(
      () => records(server as TestServer, expected),
      (found) => found.length > 0,
    );
    expect(lines).toEqual([
      expect.objectContaining({
        db_id: "default",
        current: null,
        pending: ["2.0.0", "2.3.0", "2.5.0", "2.5.6"],
      }),
    ]);
    expect((await request(server, "GET", "/health")).status).toBe(200);
    const reader = await signToken(["config:read"]);
    const status = await request(server, "GET", "/databases/default/migrations", reader);
    expect(status.body).toMatchObject({
      current: null,
      lock: null,
      pending: [{ version: "2.0.0" }, {}, {}, {}],
    });

    // Once migrated, a restart has nothing to say (checked here through the same status the line is built from).
    const writer = await signToken(["config:write"]);
    expect((await request(server, "POST", "/databases/default/migrate", writer)).status).toBe(200);
    expect((await request(server, "GET", "/databases/default/migrations", reader)).body).toMatchObject({
      current: "2.5.6",
      pending: [],
      lock: null,
    });
  });
});

describe.skipIf(!BACKENDS.includes("postgres"))("GET /databases/{db_id}/migrations during a run", () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.cleanup();
    server = undefined;
  });

  it("says a migration holds the lock, and since when", async () => {
    let entered: () => void = () => {};
    let open: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const held: Migration = {
      version: "2.6.0",
      name: "held_open",
      up: async ({ sql }) => {
        await sql`CREATE TABLE held_open (id int)`;
        entered();
        await gate;
      },
    };
    server = await startTestServer({ backend: "postgres", migrations: [...platformMigrations(), held] });
    const writer = await signToken(["config:write"]);
    const reader = await signToken(["config:read"]);
    const before = Date.now() - 1_000;
    const run = request(server, "POST", "/databases/default/migrate", writer);
    await inside;
    const during = await request(server, "GET", "/databases/default/migrations", reader);
    open();
    expect((await run).status).toBe(200);
    const body = during.body as { lock: { pid: number; since: string } | null; pending: unknown[] };
    expect(body.lock).toEqual({ pid: expect.any(Number), since: expect.any(String) });
    expect(Date.parse(body.lock?.since ?? "")).toBeGreaterThanOrEqual(before);
    expect(body.pending).toHaveLength(5);
    expect((await request(server, "GET", "/databases/default/migrations", reader)).body).toMatchObject({
      lock: null,
      pending: [],
    });
  });
});
