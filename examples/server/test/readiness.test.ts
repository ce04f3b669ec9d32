import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, signToken, startTestServer, TEST_DATABASE_URL, type TestServer } from "./helpers.js";
import { channelEnv } from "./messaging/support/whatsapp.js";

/**
 * `/ready` on real PostgreSQL turned read-only under a running server: `SELECT 1` still answers (so `/health`
 * stays 200), but the inbox cannot store, and the replica must stop taking traffic until the database is writable.
 */
describe.skipIf(TEST_DATABASE_URL === undefined)(
  "readiness of a replica whose database turns read-only",
  () => {
    let server: TestServer;
    let url: string;
    beforeAll(async () => {
      server = await startTestServer({
        backend: "postgres",
        // A configured channel: its inbox is what must be able to store. Nothing is sent in this test.
        env: channelEnv("http://127.0.0.1:9/v25.0"),
      });
      const admin = await signToken(["platform:admin"]);
      expect((await request(server, "POST", "/databases/default/migrate", admin)).status).toBe(200);
      const { current_database: name } = (await server.sql()`SELECT current_database()`)[0] as {
        current_database: string;
      };
      const base = new URL(TEST_DATABASE_URL as string);
      base.pathname = `/${name}`;
      url = base.href;
    });
    afterAll(async () => {
      await server?.cleanup();
    });

    /** Sets the database's default for new sessions and ends the server's, so its pool reconnects with it. */
    async function readOnly(on: boolean) {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const { current_database: name } = (await sql`SELECT current_database()`)[0] as {
          current_database: string;
        };
        // This session's own default may already be read-only.
        await sql.unsafe("SET default_transaction_read_only = off");
        await sql.unsafe(`ALTER DATABASE "${name}" SET default_transaction_read_only = ${on ? "on" : "off"}`);
        await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()`;
      } finally {
        await sql.end();
      }
    }

    it("is ready while writable, not ready (503, naming the inbox) while read-only, ready again after", async () => {
      const before = await request(server, "GET", "/ready");
      expect(before.status, before.text).toBe(200);
      await readOnly(true);
      try {
        // The first queries on the terminated connections may fail (closed, or reset) before the pool reconnects.
        let health = await request(server, "GET", "/health");
        for (let n = 0; n < 50 && /connection to the database (closed|was reset)/.test(health.text); n++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          health = await request(server, "GET", "/health");
        }
        // Health says so too: a replica that cannot store what it would acknowledge is not healthy either.
        expect(health.status).toBe(503);
        expect(health.text).toContain("the database is read-only");
        let ready = await request(server, "GET", "/ready");
        for (let n = 0; n < 50 && /connection to the database (closed|was reset)/.test(ready.text); n++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          ready = await request(server, "GET", "/ready");
        }
        expect(ready.status).toBe(503);
        const { reasons } = ready.body as { reasons: string[] };
        expect(reasons).toEqual(["the inbox cannot store (the database is read-only)"]);
        expect(await server.sql()`SELECT count(*)::int AS n FROM messaging.inbox`).toEqual([{ n: 0 }]);
      } finally {
        await readOnly(false);
      }
      // Each of the pool's connections was terminated: the first queries on them may fail before it reconnects.
      let again = await request(server, "GET", "/ready");
      for (let n = 0; n < 50 && again.status !== 200; n++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        again = await request(server, "GET", "/ready");
      }
      expect(again.status, again.text).toBe(200);
      expect(await server.sql()`SELECT count(*)::int AS n FROM messaging.inbox`).toEqual([{ n: 0 }]);
    });
  },
);
