import { once } from "node:events";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { type StubServer, startStubServer } from "@agent-platform/test-support/stub-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../errors.js";
import { MAX_ANSWER_BYTES } from "../limits.js";
import type { AgentMessage } from "./agent.js";
import { createHttpAgent } from "./http.js";

const message: AgentMessage = {
  channel: "whatsapp",
  from: "491",
  text: "hi",
  type: "text",
  sessionId: "whatsapp:1:491",
  raw: { id: "m" },
};

describe("createHttpAgent", () => {
  let server: StubServer;
  let url: string;
  // `chunked`: written in two parts with no Content-Length, so only reading the stream can find its size.
  let reply: { status: number; body: string; chunked?: boolean } = { status: 200, body: "{}" };
  let received: unknown;

  beforeAll(async () => {
    server = await startStubServer((request) => {
      received = JSON.parse(request.body);
      return reply;
    });
    url = `${server.url}/agent`;
  });
  afterAll(() => server.close());

  const call = () => createHttpAgent(url, 2_000)(message);
  const failure = async () => {
    const error = await call().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DeliveryError);
    return error as DeliveryError;
  };

  it("posts the message as JSON and returns its {text}", async () => {
    reply = { status: 200, body: '{"text":"hello back"}' };
    expect(await call()).toEqual({ text: "hello back" });
    expect(received).toEqual(message);
  });

  it.each([
    ["204", { status: 204, body: "" }],
    ["a null text", { status: 200, body: '{"text":null}' }],
    ["an empty text", { status: 200, body: '{"text":""}' }],
  ])("means no reply on %s", async (_, answer) => {
    reply = answer;
    expect(await call()).toBeNull();
  });

  it.each([500, 503, 429])("retries on %i", async (status) => {
    reply = { status, body: "busy" };
    expect(await failure()).toMatchObject({ code: "AGENT_FAILED", retryable: true });
  });

  it.each([400, 404])("does not retry on %i", async (status) => {
    reply = { status, body: "no" };
    expect(await failure()).toMatchObject({ code: "AGENT_FAILED", retryable: false });
  });

  it("does not retry an answer that is not {text}", async () => {
    reply = { status: 200, body: '{"text":42}' };
    expect(await failure()).toMatchObject({ retryable: false });
  });

  it.each([false, true])(
    "fails, without retrying, an answer over MAX_ANSWER_BYTES instead of buffering it (chunked: %s)",
    async (chunked) => {
      const text = "x".repeat(MAX_ANSWER_BYTES);
      reply = { status: 200, body: JSON.stringify({ text }), chunked };
      const error = await failure();
      expect(error).toMatchObject({ code: "AGENT_FAILED", retryable: false });
      expect((error as Error).message).toMatch(/over 1048576 bytes/);
      // Just under the limit is an ordinary answer.
      reply = { status: 200, body: JSON.stringify({ text: text.slice(0, MAX_ANSWER_BYTES - 20) }), chunked };
      expect(await createHttpAgent(url, 2_000)(message)).toEqual({
        text: text.slice(0, MAX_ANSWER_BYTES - 20),
      });
    },
  );

  it("retries when the runtime is unreachable", async () => {
    const error = await createHttpAgent("http://127.0.0.1:9/agent", 2_000)(message).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "AGENT_FAILED", retryable: true });
  });

  it("retries when the answer breaks off after its status", async () => {
    const broken = createTcpServer((socket) => {
      socket.on("error", () => {});
      socket.once("data", () =>
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{"text":"hel', () =>
          socket.resetAndDestroy(),
        ),
      );
    });
    broken.listen(0, "127.0.0.1");
    await once(broken, "listening");
    const port = (broken.address() as AddressInfo).port;
    try {
      const error = await createHttpAgent(
        `http://127.0.0.1:${port}/agent`,
        2_000,
      )(message).catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: "AGENT_FAILED",
        retryable: true,
        message: "Agent answered 200 but the answer broke off",
      });
    } finally {
      await new Promise<void>((resolve) => broken.close(() => resolve()));
    }
  });
});
