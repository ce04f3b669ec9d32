import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delivery, postDelivery, textMessage } from "../messaging/support/whatsapp.js";
import { FAULTS_UNAVAILABLE, type InboxCluster, startInboxCluster } from "./inbox-cluster.js";
import { ANSWER_BOUND_MS, RESUME_BOUND_MS } from "./load.js";

let sequence = 0;

/** One signed delivery: its status and how long the answer took. */
async function deliver(url: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const id = `wamid.refuses.${sequence++}`;
  const response = await postDelivery(url, delivery([textMessage(id, "15551234567", "hello")]), {
    signal: AbortSignal.timeout(15_000),
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

async function health(url: string): Promise<{ status: number; detail?: string }> {
  const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(15_000) });
  const body = (await response.json()) as { detail?: string };
  return { status: response.status, ...(body.detail === undefined ? {} : { detail: body.detail }) };
}

/** Polls `/health` every 50 ms until it answers `status`; resolves with the answer and the ms it took. */
async function healthBecomes(url: string, status: number, withinMs: number) {
  const started = performance.now();
  for (;;) {
    const answer = await health(url);
    const ms = performance.now() - started;
    if (answer.status === status) return { ...answer, ms };
    if (ms > withinMs)
      throw new Error(`/health still ${answer.status} after ${Math.round(ms)} ms: ${answer.detail}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(FAULTS_UNAVAILABLE !== undefined)("a database that answers but refuses writes", () => {
  let cluster: InboxCluster;
  let url: string;
  beforeAll(async () => {
    // The server connects as a role of its own, so its connections can be limited without locking the test out.
    cluster = await startInboxCluster({ count: 1, role: "app" });
    url = cluster.servers[0]?.url as string;
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it("read-only (default_transaction_read_only): /health fails naming it, deliveries get 503, both recover at once", async () => {
    expect((await health(url)).status).toBe(200);
    expect((await deliver(url)).status).toBe(200);

    await cluster.pg.admin(async (sql) => {
      await sql`ALTER SYSTEM SET default_transaction_read_only = on`;
      await sql`SELECT pg_reload_conf()`;
    });
    const failing = await healthBecomes(url, 503, 5_000);
    // SELECT 1 still answers: what fails is storing.
    expect(failing.detail).toBe("The inbox cannot store deliveries: the database is read-only");
    for (let n = 0; n < 3; n++) {
      const refused = await deliver(url);
      expect(refused.status).toBe(503);
      expect(refused.ms).toBeLessThan(ANSWER_BOUND_MS);
    }

    await cluster.pg.admin(async (sql) => {
      // This session is read-only too now; its own setting lets it undo the system's.
      await sql`SET default_transaction_read_only = off`;
      await sql`ALTER SYSTEM RESET default_transaction_read_only`;
      await sql`SELECT pg_reload_conf()`;
    });
    const back = await healthBecomes(url, 200, 5_000);
    expect(back.ms).toBeLessThan(RESUME_BOUND_MS);
    expect((await deliver(url)).status).toBe(200);
    console.info(
      `read-only: /health 503 within ${Math.round(failing.ms)} ms, 200 again within ${Math.round(back.ms)} ms`,
    );
  }, 60_000);

  it("no connection slot for the server (53300): /health fails naming it, deliveries get 503, both recover at once", async () => {
    expect((await deliver(url)).status).toBe(200);
    // The same refusal (SQLSTATE 53300, too_many_connections) as a full max_connections, without racing other
    // clients for the slots: the server's role may hold none, and its connections are closed.
    await cluster.pg.admin(async (sql) => {
      await sql`ALTER ROLE app CONNECTION LIMIT 0`;
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'`;
    });
    const failing = await healthBecomes(url, 503, 5_000);
    // The first answers may still see a connection being terminated (closed, or reset by the server); then each
    // says what refuses it.
    const terminating = /the connection to the database (closed|was reset)$/;
    let detail = failing.detail;
    for (let n = 0; n < 20 && detail !== undefined && terminating.test(detail); n++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      detail = (await health(url)).detail;
    }
    expect(detail).toBe(
      "Databases not answering: default; the inbox cannot store deliveries: the database is out of connection slots",
    );
    for (let n = 0; n < 3; n++) {
      const refused = await deliver(url);
      expect(refused.status).toBe(503);
      expect(refused.ms).toBeLessThan(ANSWER_BOUND_MS);
    }

    await cluster.pg.admin((sql) => sql`ALTER ROLE app CONNECTION LIMIT -1`);
    const back = await healthBecomes(url, 200, 5_000);
    expect(back.ms).toBeLessThan(RESUME_BOUND_MS);
    expect((await deliver(url)).status).toBe(200);
    console.info(
      `no slot: /health 503 within ${Math.round(failing.ms)} ms, 200 again within ${Math.round(back.ms)} ms`,
    );
  }, 60_000);
});
