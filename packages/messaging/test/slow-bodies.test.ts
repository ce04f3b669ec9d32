import { type RawClient, rawClient, statusOf } from "@agent-platform/test-support/raw-client";
import { whatsAppSignature } from "@agent-platform/test-support/webhook-signatures";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BodyBudget } from "../src/body-budget.js";
import { whatsapp } from "../src/channels/whatsapp/index.js";
import { BodiesBusyError, BodyTimeoutError } from "../src/errors.js";
import { readRawBody } from "../src/read-body.js";
import { MAX_WEBHOOK_BODY_BYTES } from "../src/webhook.js";
import { connect, DATABASES, type TestDatabase } from "./support/database.js";
import { type ServedMessaging, serveMessaging } from "./support/serve.js";

/**
 * Clients that dribble or stall, on raw sockets against createMessaging served by @hono/node-server (whose Node
 * server keeps its 300 s default request timeout: the package's own deadlines must close these). Short deadlines
 * here; the reference server's test runs the defaults' shape against the real process.
 */

const APP_SECRET = "app-secret";
const TIMEOUT_MS = 1_500;
const IDLE_MS = 500;
// The smallest budget allowed: two whole webhook bodies, large ones sharing three quarters of it.
const BUDGET = 2 * MAX_WEBHOOK_BODY_BYTES;
// How long after its deadline a refused connection may stay open: the 1 s close plus scheduling slack.
const CLOSE_SLACK_MS = 1_500;

function head(fields: Record<string, string>): string {
  const lines = Object.entries({ host: "127.0.0.1", "content-type": "application/json", ...fields });
  return `POST /whatsapp/webhook HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
}

function delivery(id: string): string {
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [
      {
        changes: [
          {
            value: {
              metadata: { phone_number_id: "1" },
              messages: [{ id, from: "15550001111", type: "text", text: { body: id } }],
            },
          },
        ],
      },
    ],
  });
}

describe("webhook bodies under deadlines and one memory budget", () => {
  let database: TestDatabase;
  let sql: ReturnType<typeof connect>;
  let served: ServedMessaging;
  let port: number;
  const clients: RawClient[] = [];

  beforeAll(async () => {
    database = await (DATABASES[0] as (typeof DATABASES)[number]).fresh();
    sql = connect(database);
    served = await serveMessaging({
      sql,
      channels: [
        whatsapp({
          appSecret: APP_SECRET,
          accessToken: "a",
          phoneNumberId: "1",
          apiBaseUrl: "http://127.0.0.1:9",
        }),
      ],
      worker: { startDelayMs: 3_600_000 },
      body: { timeoutMs: TIMEOUT_MS, idleTimeoutMs: IDLE_MS, maxPendingBytes: BUDGET },
    });
    port = Number(new URL(served.url).port);
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.destroy();
  });
  afterAll(async () => {
    await served.close();
    await sql.end();
    await database.drop();
  });

  async function open(fields: Record<string, string>): Promise<RawClient> {
    const client = await rawClient(port);
    clients.push(client);
    client.write(head(fields));
    return client;
  }

  async function post(body: string): Promise<number> {
    const response = await fetch(`${served.url}/whatsapp/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": whatsAppSignature(body, APP_SECRET),
      },
      body,
    });
    await response.arrayBuffer();
    return response.status;
  }

  it.each([
    ["a stalled Content-Length", { "content-length": "100" }, "0123456789"],
    ["a 2 GB chunk announced and not sent", { "transfer-encoding": "chunked" }, "80000000\r\n0123456789"],
  ])("answers %s 408 at the idle limit and closes the connection", async (_, fields, sent) => {
    const client = await open(fields);
    client.write(sent);
    const closedAfter = await client.closed;
    expect(statusOf(client.received())).toBe(408);
    expect(client.received()).toContain('"error_code":"REQUEST_TIMEOUT"');
    expect(client.received()).toContain(`for ${IDLE_MS} ms`);
    expect(client.received().toLowerCase()).toContain("connection: close");
    expect(closedAfter).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(closedAfter).toBeLessThan(IDLE_MS + CLOSE_SLACK_MS);
  });

  it.each([
    ["a Content-Length body", { "content-length": "1000" }, ""],
    ["a chunked body", { "transfer-encoding": "chunked" }, "3e8\r\n"],
  ])(
    "answers %s dribbled faster than the idle limit 408 at the whole-body deadline",
    async (_, fields, first) => {
      const client = await open(fields);
      client.write(first);
      client.dribble("x".repeat(1000), IDLE_MS / 5);
      const closedAfter = await client.closed;
      expect(statusOf(client.received())).toBe(408);
      expect(client.received()).toContain(`within ${TIMEOUT_MS} ms`);
      expect(closedAfter).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(closedAfter).toBeLessThan(TIMEOUT_MS + CLOSE_SLACK_MS);
    },
  );

  it("refuses a declared body the budget cannot hold with 503, while small deliveries still get 200", async () => {
    // One large body holds its declared MiB (a stalled one); a second no longer fits the large bodies' share.
    const holder = await open({ "content-length": String(MAX_WEBHOOK_BODY_BYTES) });
    holder.write("x".repeat(1000));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = await open({ "content-length": String(MAX_WEBHOOK_BODY_BYTES) });
    const refusedClosedAfter = await refused.closed;
    expect(statusOf(refused.received())).toBe(503);
    expect(refused.received()).toMatch(/retry-after: \d+/i);
    expect(refused.received()).toContain("retry later");
    expect(refusedClosedAfter).toBeLessThan(CLOSE_SLACK_MS);
    // The part kept for small bodies.
    expect(await post(delivery("wamid.small.1"))).toBe(200);
    await holder.closed;
    // Released with the answer: a large body fits again.
    const again = await open({ "content-length": String(MAX_WEBHOOK_BODY_BYTES) });
    again.write("x".repeat(MAX_WEBHOOK_BODY_BYTES - 10));
    await again.closed;
    expect(statusOf(again.received())).toBe(408);
  });

  it("refuses chunked bodies with 503 as soon as their bytes pass the budget, and closes them", async () => {
    // No length declared: each is charged as it arrives, and the third passes the large bodies' share.
    const piece = 700 * 1024;
    const chunked = await Promise.all([1, 2, 3].map(() => open({ "transfer-encoding": "chunked" })));
    for (const client of chunked) {
      client.write(`${piece.toString(16)}\r\n${"x".repeat(piece)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const statuses = await Promise.all(
      chunked.map(async (client) => {
        await client.closed;
        return statusOf(client.received());
      }),
    );
    expect(statuses.filter((status) => status === 503)).toHaveLength(1);
    expect(statuses.filter((status) => status === 408)).toHaveLength(2);
    expect(await post(delivery("wamid.small.2"))).toBe(200);
  });
});

describe("readRawBody of a web stream (no Node request)", () => {
  const limits = (budget = new BodyBudget(BUDGET)) => ({
    maxBytes: MAX_WEBHOOK_BODY_BYTES,
    timeoutMs: 400,
    idleTimeoutMs: 150,
    charge: budget.open(),
  });
  const request = (body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
    new Request("http://localhost/webhook", { method: "POST", body, headers, duplex: "half" } as RequestInit);

  it("gives up on a stream that stalls, at the idle limit, and cancels it", async () => {
    let cancelled = false;
    const stalled = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new Uint8Array(3)),
      cancel: () => {
        cancelled = true;
      },
    });
    const started = performance.now();
    await expect(readRawBody(request(stalled), limits())).rejects.toMatchObject({ kind: "idle" });
    expect(performance.now() - started).toBeLessThan(400);
    expect(cancelled).toBe(true);
  });

  it("gives up on a stream that dribbles, at the whole-body deadline", async () => {
    let timer: NodeJS.Timeout | undefined;
    const dribble = new ReadableStream<Uint8Array>({
      start: (controller) => {
        timer = setInterval(() => controller.enqueue(new Uint8Array(1)), 50);
      },
      cancel: () => clearInterval(timer),
    });
    const error = await readRawBody(request(dribble), limits()).catch((caught: unknown) => caught);
    clearInterval(timer);
    expect(error).toBeInstanceOf(BodyTimeoutError);
    expect(error).toMatchObject({ kind: "total", code: "REQUEST_TIMEOUT" });
  });

  it("charges the budget and refuses past it", async () => {
    const budget = new BodyBudget(BUDGET);
    const first = limits(budget);
    expect(first.charge.grow(MAX_WEBHOOK_BODY_BYTES)).toBe(true);
    const body = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    await expect(
      readRawBody(request(body, { "content-length": String(MAX_WEBHOOK_BODY_BYTES) }), limits(budget)),
    ).rejects.toBeInstanceOf(BodiesBusyError);
    first.charge.release();
    expect(budget.heldBytes).toBe(0);
  });
});
