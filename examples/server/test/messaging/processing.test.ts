import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../databases.js";
import { startAgentStub } from "./support/agent-stub.js";
import { type GraphStub, startGraphStub, waitFor } from "./support/graph-stub.js";
import { type MessagingTestServer, startMessagingServer } from "./support/server.js";
import { channelEnv, delivery, PHONE_NUMBER_ID, postDelivery, textMessage } from "./support/whatsapp.js";

describe.each(BACKENDS)("inbox processing on %s", (backend) => {
  let graph: GraphStub;
  let server: MessagingTestServer | undefined;

  beforeAll(async () => {
    graph = await startGraphStub();
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    graph.requests.length = 0;
    graph.answer = () => 200;
  });
  afterAll(async () => {
    await graph?.close();
  });

  async function start(extra: Record<string, string> = {}) {
    server = await startMessagingServer(backend, channelEnv(graph.url, extra));
    return server;
  }

  async function send(url: string, ...messages: object[]) {
    const response = await postDelivery(url, delivery(messages));
    expect(response.status).toBe(200);
    return response.json();
  }

  it("retries after a Graph API 500 and answers once it succeeds", async () => {
    graph.answer = (_, index) => (index === 0 ? 500 : 200);
    const { url } = await start();
    await send(url, textMessage("wamid.retry", "15551110000", "again"));
    await waitFor("the row done", async () => ((await server?.inbox("done")) ?? []).length === 1);
    expect(graph.requests.map((r) => [r.status, r.body.text?.body])).toEqual([
      [500, "again"],
      [200, "again"],
    ]);
    const [row] = (await server?.inbox("done")) ?? [];
    expect(row).toMatchObject({ message_id: "wamid.retry", status: "done", attempts: 2 });
  });

  it("retries after a network error", async () => {
    const { url } = await start({ WHATSAPP_API_BASE_URL: "http://127.0.0.1:9/v25.0" });
    await send(url, textMessage("wamid.unreachable", "15551110001", "anyone?"));
    await waitFor("a retry scheduled", async () => {
      const [row] = (await server?.inbox("pending")) ?? [];
      return row !== undefined && row.attempts >= 1 && /unreachable/.test(row.last_error ?? "");
    });
  });

  it("fails a message without retry on a Graph API 400 and lists it with its error", async () => {
    graph.answer = () => 400;
    const { url } = await start();
    await send(url, textMessage("wamid.rejected", "15551110002", "nope"));
    await waitFor("the failed row", async () => ((await server?.inbox("failed")) ?? []).length === 1);
    const failed = (await server?.inbox("failed")) ?? [];
    expect(failed).toEqual([
      expect.objectContaining({
        channel: "whatsapp",
        message_id: "wamid.rejected",
        from: "15551110002",
        type: "text",
        status: "failed",
        attempts: 1,
        last_error: "Graph API answered 400: stub error 400",
      }),
    ]);
    expect(graph.requests).toHaveLength(1);
  });

  it("marks a message failed after the last allowed attempt", async () => {
    graph.answer = () => 503;
    const { url } = await start({ MESSAGING_MAX_ATTEMPTS: "3" });
    await send(url, textMessage("wamid.exhausted", "15551110003", "hello?"));
    await waitFor("the failed row", async () => ((await server?.inbox("failed")) ?? []).length === 1);
    const [row] = (await server?.inbox("failed")) ?? [];
    expect(row).toMatchObject({
      attempts: 3,
      last_error: "Gave up after 3 attempts: Graph API answered 503: stub error 503",
    });
    expect(graph.requests).toHaveLength(3);
  });

  it("sends a reply of 4096 characters as one message", async () => {
    const { url } = await start();
    const text = "x".repeat(4096);
    await send(url, textMessage("wamid.4096", "15551110004", text));
    await waitFor("the reply", () => graph.accepted().length === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(graph.requests.map((r) => r.body.text?.body)).toEqual([text]);
  });

  it("splits a reply of 4097 characters into two numbered messages of at most 4096, in order", async () => {
    const { url } = await start();
    const text = "y".repeat(4097);
    await send(url, textMessage("wamid.4097", "15551110005", text));
    await waitFor("both parts", () => graph.accepted().length === 2);
    const bodies = graph.requests.map((r) => r.body.text?.body ?? "");
    expect(bodies[0]).toMatch(/^\(1\/2\) y+$/);
    expect(bodies[1]).toMatch(/^\(2\/2\) y+$/);
    for (const body of bodies) expect(body.length).toBeLessThanOrEqual(4096);
    expect(bodies.map((body) => body.slice("(1/2) ".length)).join("")).toBe(text);
  });

  it("resends only the parts not yet accepted when a later part fails", async () => {
    graph.answer = (_, index) => (index === 1 ? 502 : 200);
    const { url } = await start();
    await send(url, textMessage("wamid.parts", "15551110006", "z".repeat(5000)));
    await waitFor("both parts accepted", () => graph.accepted().length === 2);
    expect(graph.requests.map((r) => [r.status, r.body.text?.body?.slice(0, 6)])).toEqual([
      [200, "(1/2) "],
      [502, "(2/2) "],
      [200, "(2/2) "],
    ]);
  });

  it("hands each message type to AGENT_URL as the issue describes and replies with its answer", async () => {
    const agent = await startAgentStub();
    try {
      // Eight messages from one user: WhatsApp's documented pair rate (a message every 6 s to one user) would spread
      // the replies over 42 s; pacing has its own tests (pacing.test.ts).
      const { url } = await start({ AGENT_URL: agent.url, WHATSAPP_PACING_PER_CHAT_MS: "0" });
      const from = "15552220000";
      const base = { from, timestamp: "1700000000" };
      await send(
        url,
        { ...base, id: "t", type: "text", text: { body: "plain" } },
        {
          ...base,
          id: "i",
          type: "image",
          image: { id: "img-1", mime_type: "image/jpeg", caption: "a cat" },
        },
        {
          ...base,
          id: "v",
          type: "video",
          video: { id: "vid-1", mime_type: "video/mp4", caption: "a clip" },
        },
        {
          ...base,
          id: "d",
          type: "document",
          document: { id: "doc-1", mime_type: "application/pdf", caption: "the file", filename: "f.pdf" },
        },
        { ...base, id: "a", type: "audio", audio: { id: "aud-1", mime_type: "audio/ogg", voice: true } },
        {
          ...base,
          id: "b",
          type: "interactive",
          interactive: { type: "button_reply", button_reply: { id: "yes", title: "Yes" } },
        },
        {
          ...base,
          id: "l",
          type: "interactive",
          interactive: { type: "list_reply", list_reply: { id: "row", title: "Row two" } },
        },
        { ...base, id: "s", type: "sticker", sticker: { id: "stk-1", mime_type: "image/webp" } },
      );
      await waitFor("eight replies", () => graph.accepted().length === 8);
      const sessionId = `whatsapp:${PHONE_NUMBER_ID}:${from}`;
      const byType = new Map(agent.received.map((m) => [m.raw && (m.raw as { id: string }).id, m]));
      expect(agent.received).toHaveLength(7);
      expect(byType.get("t")).toMatchObject({
        channel: "whatsapp",
        from,
        type: "text",
        text: "plain",
        sessionId,
      });
      expect(byType.get("t")?.media).toBeUndefined();
      expect(byType.get("i")).toMatchObject({ type: "image", text: "a cat", media: { id: "img-1" } });
      expect(byType.get("v")).toMatchObject({ type: "video", text: "a clip", media: { id: "vid-1" } });
      expect(byType.get("d")).toMatchObject({
        type: "document",
        text: "the file",
        media: { id: "doc-1", filename: "f.pdf" },
      });
      expect(byType.get("a")).toMatchObject({
        type: "audio",
        text: "",
        media: { id: "aud-1", mimeType: "audio/ogg" },
      });
      expect(byType.get("b")).toMatchObject({ type: "interactive", text: "Yes" });
      expect(byType.get("l")).toMatchObject({ type: "interactive", text: "Row two" });
      expect(byType.get("i")?.raw).toMatchObject({ id: "i", image: { id: "img-1" } });
      expect(
        graph
          .accepted()
          .map((r) => r.body.text?.body)
          .sort(),
      ).toEqual(
        [
          "agent: plain",
          "agent: a cat",
          "agent: a clip",
          "agent: the file",
          "agent: ",
          "agent: Yes",
          "agent: Row two",
          "Sorry, that message type is not supported yet.",
        ].sort(),
      );
    } finally {
      await agent.close();
    }
  });

  it("echoes by default and says what arrived when there is no text", async () => {
    const { url } = await start();
    await send(url, { from: "15553330000", id: "img", type: "image", image: { id: "img-9" } });
    await waitFor("the reply", () => graph.accepted().length === 1);
    expect(graph.requests[0]?.body.text?.body).toBe("Received your image message.");
  });

  it("accepts unsigned deliveries only when told to skip validation and no app secret is set", async () => {
    const { url } = await start({ WHATSAPP_APP_SECRET: "", WHATSAPP_SKIP_SIGNATURE_VALIDATION: "true" });
    const response = await postDelivery(url, delivery([textMessage("wamid.unsigned", "15554440000", "hi")]), {
      signature: null,
    });
    expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    await waitFor("the reply", () => graph.accepted().length === 1);
    expect(
      server?.logs.some((line) =>
        line.includes("skipSignatureValidation: true: webhook requests are NOT authenticated"),
      ),
    ).toBe(true);
  });
});
