import type { Migration } from "@agent-platform/migrator";
import { afterEach, describe, expect, it } from "vitest";
import { platformMigrations } from "../src/migrations/index.js";
import { request, signToken, startTestServer, type TestServer } from "./helpers.js";

/** A migration that waits, inside the run, until the test opens its gate: a request held in flight. */
function gatedMigration() {
  let started: () => void = () => {};
  let open: () => void = () => {};
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const migration: Migration = {
    version: "2.6.0",
    name: "held_open",
    up: async ({ sql }) => {
      started();
      await gate;
      await sql`CREATE TABLE held_open (id int)`;
    },
    down: ({ sql }) => sql`DROP TABLE held_open`,
  };
  return { migration, running, open };
}

describe("graceful shutdown", () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.cleanup();
    server = undefined;
  });

  it("stops accepting, lets the request in flight finish, then stops", async () => {
    const held = gatedMigration();
    server = await startTestServer({ migrations: [...platformMigrations(), held.migration] });
    const token = await signToken(["config:write"]);
    const inFlight = request(server, "POST", "/databases/default/migrate", token);
    await held.running;

    const stopped = server.stop();
    await expect(request(server, "GET", "/health")).rejects.toThrow();
    held.open();
    const result = await inFlight;
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ to_version: "2.6.0" });
    await stopped;
  });

  it("cuts a request that outlasts SHUTDOWN_TIMEOUT_MS and still stops", async () => {
    const held = gatedMigration();
    server = await startTestServer({
      migrations: [...platformMigrations(), held.migration],
      env: { SHUTDOWN_TIMEOUT_MS: "200" },
    });
    const token = await signToken(["config:write"]);
    const inFlight = request(server, "POST", "/databases/default/migrate", token);
    await held.running;
    const stopped = server.stop();
    await expect(inFlight).rejects.toThrow();
    held.open();
    await stopped;
  });
});
