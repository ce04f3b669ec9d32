import { whatsAppSignature } from "@agent-platform/test-support/webhook-signatures";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentHandler } from "../src/agents/agent.js";
import { whatsapp } from "../src/channels/whatsapp/index.js";
import type { MessagingOptions } from "../src/messaging.js";
import { type GraphStub, startGraphStub, waitFor } from "./support/api-stubs.js";
import { connect, DATABASES, type TestDatabase } from "./support/database.js";
import { type ServedMessaging, serveMessaging } from "./support/serve.js";

const APP_SECRET = "operations-secret";
const PHONE_NUMBER_ID = "1555";
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A WhatsApp delivery of text messages `[id, sender, text]`, as Meta posts it. */
function delivery(...messages: [string, string, string][]) {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: "waba",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { phone_number_id: PHONE_NUMBER_ID },
              messages: messages.map(([id, from, body], index) => ({
                id,
                from,
                timestamp: String(1_700_000_000 + index),
                type: "text",
                text: { body },
              })),
            },
          },
        ],
      },
    ],
  };
}

describe.each(DATABASES)("inbox operations over HTTP on $name", ({ fresh }) => {
  let database: TestDatabase;
  let graph: GraphStub;
  let sql: ReturnType<typeof connect>;
  let served: ServedMessaging | undefined;
  let agentCalls: string[];

  beforeEach(async () => {
    database = await fresh();
    graph = await startGraphStub();
    sql = connect(database);
    agentCalls = [];
  });
  afterEach(async () => {
    await served?.close();
    served = undefined;
    await sql.end();
    await graph.close();
    await database.drop();
  });

  async function serve(agent: AgentHandler, extra: Partial<MessagingOptions> = {}) {
    served = await serveMessaging({
      sql,
      channels: [
        whatsapp({
          appSecret: APP_SECRET,
          accessToken: "a",
          phoneNumberId: PHONE_NUMBER_ID,
          apiBaseUrl: graph.url,
        }),
      ],
      agent: async (message) => {
        agentCalls.push(message.text);
        return agent(message);
      },
      logger: silent,
      worker: { pollMs: 50, retryBaseMs: 10, retryMaxMs: 10, maxAttempts: 2 },
      ...extra,
    });
    return served;
  }

  async function post(...messages: [string, string, string][]) {
    const raw = JSON.stringify(delivery(...messages));
    const response = await fetch(`${served?.url}/whatsapp/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": whatsAppSignature(raw, APP_SECRET),
      },
      body: raw,
    });
    expect(response.status).toBe(200);
  }
  const call = async (method: string, path: string) => {
    const response = await fetch(`${served?.url}${path}`, { method });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const statusOf = async (id: string) =>
    (await sql<{ status: string }[]>`SELECT status FROM messaging.inbox WHERE message_id = ${id}`)[0]?.status;

  it("counts rows by status and dates the oldest pending one", async () => {
    await serve(async (m) => ({ text: m.text }), { worker: { startDelayMs: 3_600_000 } });
    const empty = await call("GET", "/whatsapp/inbox/stats");
    expect(empty).toEqual({
      status: 200,
      body: {
        channel: "whatsapp",
        counts: { pending: 0, processing: 0, done: 0, failed: 0, rejected: 0, notice: 0 },
        oldest_pending_ms: null,
        oldest_pending_at: null,
      },
    });
    await post(["s1", "491", "one"], ["s2", "492", "two"]);
    await sql`UPDATE messaging.inbox SET received_at = now() - interval '90 seconds' WHERE message_id = 's1'`;
    await sql`UPDATE messaging.inbox SET status = 'failed' WHERE message_id = 's2'`;
    const { status, body } = await call("GET", "/whatsapp/inbox/stats");
    expect(status).toBe(200);
    expect(body.counts).toEqual({ pending: 1, processing: 0, done: 0, failed: 1, rejected: 0, notice: 0 });
    expect(body.oldest_pending_ms).toBeGreaterThanOrEqual(89_000);
    expect(body.oldest_pending_ms).toBeLessThan(600_000);
    expect(Date.now() - Date.parse(body.oldest_pending_at as string)).toBeGreaterThanOrEqual(89_000);
  });

  it("retries one failed message: the parts already accepted are not sent again, nor is the agent asked again", async () => {
    // A reply of two parts; the Graph API refuses the second part once, for good (400).
    graph.answer = (_request, index) => (index === 1 ? 400 : 200);
    await serve(async () => ({ text: `${"a".repeat(4000)} ${"b".repeat(3000)}` }));
    await post(["r1", "491", "long please"]);
    await waitFor("the row failed", async () => (await statusOf("r1")) === "failed");
    expect(graph.requests).toHaveLength(2);

    expect(await call("POST", "/whatsapp/inbox/unknown/retry")).toMatchObject({
      status: 404,
      body: { error_code: "INBOX_MESSAGE_NOT_FOUND" },
    });
    expect((await call("POST", `/whatsapp/inbox/${"x".repeat(257)}/retry`)).status).toBe(422);
    const retried = await call("POST", "/whatsapp/inbox/r1/retry");
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ message_id: "r1", status: "pending", attempts: 0 });
    await waitFor("the row done", async () => (await statusOf("r1")) === "done");
    expect(agentCalls).toEqual(["long please"]);
    // The first part once, the second part twice (refused, then accepted): nothing sent twice that was accepted.
    const bodies = graph.requests.map((request) => (request.body.text?.body?.includes("aaaa") ? "a" : "b"));
    expect(bodies).toEqual(["a", "b", "b"]);
    expect(await call("POST", "/whatsapp/inbox/r1/retry")).toMatchObject({
      status: 409,
      body: { error_code: "INBOX_STATUS_CONFLICT" },
    });
  });

  it("retries failed messages in a batch, oldest first, up to the limit", async () => {
    await serve(async (m) => ({ text: m.text }), { worker: { startDelayMs: 3_600_000 } });
    await post(["f1", "491", "1"], ["f2", "492", "2"], ["f3", "493", "3"], ["d1", "494", "4"]);
    await sql`UPDATE messaging.inbox SET status = 'failed', attempts = 2,
                received_at = now() - (substr(message_id, 2)::int * interval '1 minute')
              WHERE message_id LIKE 'f%'`;
    await sql`UPDATE messaging.inbox SET status = 'done' WHERE message_id = 'd1'`;
    for (const bad of ["status=done", "status=failed&limit=0", "status=failed&limit=1001", "limit=2"]) {
      expect((await call("POST", `/whatsapp/inbox/retry?${bad}`)).status).toBe(422);
    }
    expect(await call("POST", "/whatsapp/inbox/retry?status=failed&limit=2")).toEqual({
      status: 200,
      body: { retried: 2, message_ids: ["f3", "f2"] },
    });
    const rows = await sql<{ message_id: string; status: string; attempts: number }[]>`
      SELECT message_id, status, attempts FROM messaging.inbox ORDER BY message_id`;
    expect(rows).toEqual([
      { message_id: "d1", status: "done", attempts: 0 },
      { message_id: "f1", status: "failed", attempts: 2 },
      { message_id: "f2", status: "pending", attempts: 0 },
      { message_id: "f3", status: "pending", attempts: 0 },
    ]);
    expect(await call("POST", "/whatsapp/inbox/retry?status=failed")).toEqual({
      status: 200,
      body: { retried: 1, message_ids: ["f1"] },
    });
  });

  it("erases a conversation, and a message being answered is not answered afterwards", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await serve(async (m) => {
      if (m.text === "hold") await held;
      return { text: `re: ${m.text}` };
    });
    await post(["e1", "491", "first"], ["o1", "492", "other"]);
    await waitFor("two replies", () => graph.accepted().length === 2);
    await post(["e2", "491", "hold"], ["e3", "491", "after"]);
    await waitFor("the agent holds e2", () => agentCalls.includes("hold"));
    expect(await statusOf("e2")).toBe("processing");

    for (const bad of ["", "?session_id=", `?session_id=${"x".repeat(1025)}`]) {
      expect((await call("DELETE", `/whatsapp/inbox${bad}`)).status).toBe(422);
    }
    const erased = await call("DELETE", `/whatsapp/inbox?session_id=whatsapp:${PHONE_NUMBER_ID}:491`);
    expect(erased).toEqual({ status: 200, body: { deleted: 3 } });
    release();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const left = await sql<
      { message_id: string }[]
    >`SELECT message_id FROM messaging.inbox ORDER BY message_id`;
    expect(left.map((row) => row.message_id)).toEqual(["o1"]);
    expect(graph.accepted().map((request) => request.body.text?.body)).toEqual(
      expect.arrayContaining(["re: first", "re: other"]),
    );
    expect(graph.requests).toHaveLength(2);
    expect(await call("DELETE", `/whatsapp/inbox?session_id=whatsapp:${PHONE_NUMBER_ID}:491`)).toEqual({
      status: 200,
      body: { deleted: 0 },
    });
  });

  it("deletes finished rows past their retention in small batches, and keeps the rest", async () => {
    await serve(async (m) => ({ text: m.text }), {
      worker: { startDelayMs: 3_600_000 },
      retention: { doneDays: 30, failedDays: 90 },
    });
    await sql`
      INSERT INTO messaging.inbox (channel, message_id, account_id, sender, message_type, message, status, updated_at)
      SELECT 'whatsapp', 'old-' || n, 'a', 's', 'text', '{}'::jsonb,
             (ARRAY['done', 'rejected', 'notice', 'failed', 'pending'])[1 + n % 5],
             now() - ((CASE WHEN n % 2 = 0 THEN 31 ELSE 89 END) * interval '1 day')
      FROM generate_series(1, 1500) AS n`;
    await waitFor(
      "the retention pass",
      async () =>
        (
          await sql<
            { n: number }[]
          >`SELECT count(*)::int AS n FROM messaging.inbox WHERE status IN ('done', 'rejected', 'notice') AND updated_at < now() - interval '30 days'`
        )[0]?.n === 0,
      15_000,
    );
    const left = await sql<{ status: string; n: number }[]>`
      SELECT status, count(*)::int AS n FROM messaging.inbox GROUP BY status ORDER BY status`;
    // failed rows are 31 or 89 days old: within 90 days, all kept; pending ones are never deleted.
    expect(left).toEqual([
      { status: "failed", n: 300 },
      { status: "pending", n: 300 },
    ]);
  });
});
