import type { Logger, LogMethod } from "@agent-platform/common";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentHandler } from "../src/agents/agent.js";
import { createWhatsAppChannel } from "../src/channels/whatsapp/channel.js";
import { DeliveryError } from "../src/errors.js";
import { migrateInbox } from "../src/inbox/schema.js";
import { SendPace } from "../src/inbox/send-pace.js";
import { InboxStore } from "../src/inbox/store.js";
import { ABORT_GRACE_MS, InboxWorker } from "../src/inbox/worker.js";
import type { SendPacing } from "../src/pacing.js";
import { type GraphStub, startGraphStub, waitFor } from "./support/api-stubs.js";
import { connect, DATABASES, type TestDatabase } from "./support/database.js";
import { textMessage } from "./support/messages.js";

const logger = pino({ level: "silent" });

const message = (id: string) => textMessage(id, { accountId: "1", from: `49${id}` });

describe.each(DATABASES)("inbox worker on $name", ({ fresh }) => {
  let database: TestDatabase;
  let graph: GraphStub;
  let sql: ReturnType<typeof connect>;
  let store: InboxStore;

  beforeEach(async () => {
    database = await fresh();
    graph = await startGraphStub();
    sql = connect(database);
    store = new InboxStore(sql, () => migrateInbox(sql, logger));
  });
  afterEach(async () => {
    await sql.end();
    await graph.close();
    await database.drop();
  });

  function worker(
    agent: AgentHandler,
    concurrency: number,
    workerLogger: Logger = logger,
    pacing?: SendPacing,
  ) {
    return new InboxWorker({
      store,
      pace: new SendPace(sql),
      channel: createWhatsAppChannel({
        verifyToken: undefined,
        appSecret: "s",
        accessToken: "a",
        phoneNumberId: "1",
        apiBaseUrl: graph.url,
        apiTimeoutMs: 2_000,
        pacing,
      }),
      agent,
      logger: workerLogger,
      concurrency,
      pollMs: 50,
      startDelayMs: 0,
      maxAttempts: 3,
      retryBaseMs: 10,
      retryMaxMs: 10,
      leaseMs: 60_000,
      ordering: "none",
    });
  }

  it("keeps at most `concurrency` messages in flight, and stop() waits for them", async () => {
    await store.insert("whatsapp", ["a", "b", "c", "d", "e"].map(message));
    let inFlight = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const agent: AgentHandler = async (m) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise<void>((resolve) => releases.push(resolve));
      inFlight--;
      return { text: m.text };
    };
    const running = worker(agent, 2);
    running.start();
    await waitFor("two messages in flight", () => releases.length === 2);
    let stopped = false;
    const stopping = running.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(stopped).toBe(false);
    for (const release of releases) release();
    await stopping;
    expect(peak).toBe(2);
    expect(graph.accepted()).toHaveLength(2);
    // The two in flight were finished; nothing else was claimed after stop().
    expect(await store.list("whatsapp", "done", 10)).toHaveLength(2);
    expect(await store.list("whatsapp", "pending", 10)).toHaveLength(3);
  });

  it("stop(deadline) aborts the calls in flight at the deadline and leaves their messages leased", async () => {
    await store.insert("whatsapp", ["a", "b"].map(message));
    const signals: (AbortSignal | undefined)[] = [];
    // "a" gives up when told; "b" ignores the signal and never answers: stop() still resolves after its grace.
    const agent: AgentHandler = (m, options) => {
      signals.push(options?.signal);
      return new Promise((_, reject) => {
        if (m.text === "a") options?.signal?.addEventListener("abort", () => reject(new Error("aborted")));
      });
    };
    const running = worker(agent, 2);
    running.start();
    await waitFor("two agent calls", () => signals.length === 2);
    const started = performance.now();
    await running.stop(AbortSignal.timeout(200));
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(200 + ABORT_GRACE_MS + 1_000);
    expect(signals.every((signal) => signal?.aborted)).toBe(true);
    // Nothing recorded: both stay leased (processing, first attempt) for whoever claims them when the lease expires.
    expect(await store.list("whatsapp", "processing", 10)).toHaveLength(2);
    expect(await sql`SELECT attempts, last_error FROM messaging.inbox ORDER BY message_id`).toEqual([
      { attempts: 1, last_error: null },
      { attempts: 1, last_error: null },
    ]);
  });

  it("makes a message's child logger only when it logs, with the message's bindings", async () => {
    // An answered message logs nothing, so it must not pay for a child logger (pino's costs ~70 µs a message).
    const children: Record<string, unknown>[] = [];
    const records: { bindings: Record<string, unknown>; fields: unknown; message?: string }[] = [];
    const recording = (bindings: Record<string, unknown>): Logger => {
      const log: LogMethod = (fields: object | string, message?: string) => {
        if (typeof fields === "string") records.push({ bindings, fields: {}, message: fields });
        else records.push({ bindings, fields, ...(message === undefined ? {} : { message }) });
      };
      return {
        debug: log,
        info: log,
        warn: log,
        error: log,
        child: (more) => {
          children.push(more);
          return recording({ ...bindings, ...more });
        },
      };
    };
    await store.insert("whatsapp", ["quiet1", "quiet2", "refused"].map(message));
    const running = worker(
      async (m) => {
        if (m.text === "refused") throw new DeliveryError("AGENT_FAILED", "agent said no", false);
        return { text: m.text };
      },
      2,
      recording({}),
    );
    running.start();
    await waitFor("all three settled", async () => (await store.list("whatsapp", "pending", 5)).length === 0);
    await waitFor("the failure logged", () => records.length === 1);
    await running.stop();
    expect(graph.accepted()).toHaveLength(2);
    expect(children).toEqual([{ channel: "whatsapp", message_id: "refused", attempt: 1 }]);
    expect(records[0]).toMatchObject({
      bindings: { channel: "whatsapp", message_id: "refused", attempt: 1 },
      message: "inbox message failed",
    });
  });

  it("retries a message whose agent threw and answers it", async () => {
    await store.insert("whatsapp", [message("flaky")]);
    let calls = 0;
    const running = worker(async (m) => {
      calls++;
      if (calls === 1) throw new Error("agent crashed");
      return { text: m.text };
    }, 1);
    running.start();
    await waitFor("the reply", () => graph.accepted().length === 1);
    await running.stop();
    expect(calls).toBe(2);
  });

  it("resends only the parts an earlier attempt did not get accepted, without asking the agent again", async () => {
    await store.insert("whatsapp", [message("resumed")]);
    const [earlier] = await store.claim("whatsapp", 1, 60_000);
    if (!earlier) throw new Error("nothing claimed");
    await store.saveReply(earlier, ["part one", "part two", "part three"], 60_000);
    await store.markPartsSent(earlier, 1, 60_000);
    await store.retryLater(earlier, "Graph API unreachable", 0);
    let asked = 0;
    const running = worker(async () => {
      asked++;
      return { text: "not this" };
    }, 1);
    running.start();
    await waitFor("the row done", async () => (await store.list("whatsapp", "done", 1)).length === 1);
    await running.stop();
    expect(asked).toBe(0);
    expect(graph.accepted().map((request) => request.body.text?.body)).toEqual(["part two", "part three"]);
    expect(await sql`SELECT parts_sent, attempts FROM messaging.inbox`).toEqual([
      { parts_sent: 3, attempts: 2 },
    ]);
  });

  it.each([
    ["a stop ends its wait", 1_500],
    ["its next permit is further away than a worker waits", 6_000],
  ])("puts a paced message back to pending when %s, the attempt not counted", async (_, perChatMs) => {
    await store.insert("whatsapp", [message("paced")]);
    // Two parts to one chat: the second's permit is perChatMs after the first was accepted.
    const running = worker(async () => ({ text: "x".repeat(5_000) }), 1, logger, {
      perChatMs,
      perAccountPerSecond: 0,
    });
    running.start();
    await waitFor("the first part sent", () => graph.accepted().length === 1);
    if (perChatMs < 2_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopping = Date.now();
      await running.stop();
      expect(Date.now() - stopping).toBeLessThan(2_000);
    } else {
      await waitFor(
        "the row back to pending",
        async () => (await store.list("whatsapp", "pending", 1)).length === 1,
      );
      await running.stop();
    }
    expect(graph.accepted()).toHaveLength(1);
    const [row] = await sql<{ status: string; parts_sent: number; attempts: number; due_in_ms: number }[]>`
      SELECT status, parts_sent, attempts,
             extract(epoch FROM next_attempt_at - now())::float8 * 1000 AS due_in_ms
      FROM messaging.inbox`;
    expect(row).toMatchObject({ status: "pending", parts_sent: 1, attempts: 0 });
    // Due when the permit is: not before (it would be refused again), not much later.
    expect(row?.due_in_ms).toBeGreaterThan(perChatMs - 1_000);
    expect(row?.due_in_ms).toBeLessThanOrEqual(perChatMs);
  });

  it("claims in batches of at least half its slots, answering every message once", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `batch${i}`);
    await store.insert("whatsapp", ids.map(message));
    const limits: number[] = [];
    const claim = store.claim.bind(store);
    store.claim = (channel, limit, leaseMs) => {
      limits.push(limit);
      return claim(channel, limit, leaseMs);
    };
    const running = worker(async (m) => {
      // Messages finish one by one, as a real agent's do.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      return { text: m.text };
    }, 4);
    running.start();
    await waitFor("every reply", () => graph.accepted().length === ids.length);
    await running.stop();
    expect(
      graph
        .accepted()
        .map((request) => request.body.text?.body)
        .sort(),
    ).toEqual([...ids].sort());
    expect(limits.length).toBeGreaterThan(1);
    for (const limit of limits) expect(limit).toBeGreaterThanOrEqual(2);
  });
});
