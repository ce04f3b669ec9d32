import { type StubServer, startStubServer } from "@agent-platform/test-support/stub-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../errors.js";
import { MAX_ANSWER_BYTES } from "../limits.js";
import { postJson } from "./send.js";

// A chat-API stand-in whose answer each test sets; `chunked` sends it without a Content-Length.
describe("postJson reads a chat API's answer within MAX_ANSWER_BYTES", () => {
  let server: StubServer;
  let url: string;
  const answer = (status: number, body: string, chunked: boolean) => {
    server.answer = { status, body, chunked, headers: { "retry-after": "7" } };
  };

  beforeAll(async () => {
    server = await startStubServer();
    url = `${server.url}/bot123:secret/sendMessage`;
  });
  afterAll(() => server.close());

  const send = () => postJson("Stand-in API", url, { body: { text: "hi" }, timeoutMs: 5_000 });

  it.each([false, true])(
    "returns status, hint, text and JSON of an ordinary answer (chunked: %s)",
    async (chunked) => {
      answer(429, '{"ok":false,"error":"ratelimited"}', chunked);
      expect(await send()).toEqual({
        status: 429,
        retryAfterMs: 7_000,
        json: { ok: false, error: "ratelimited" },
        text: '{"ok":false,"error":"ratelimited"}',
        complete: true,
      });
    },
  );

  it.each([false, true])(
    "fails the send without retrying when the answer is over the limit, naming neither URL nor token (chunked: %s)",
    async (chunked) => {
      answer(200, `{"ok":true,"pad":"${"x".repeat(MAX_ANSWER_BYTES)}"}`, chunked);
      const error = await send().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DeliveryError);
      expect(error).toMatchObject({ code: "SEND_FAILED", retryable: false });
      expect((error as Error).message).toBe(
        `Stand-in API answered 200 with a body over ${MAX_ANSWER_BYTES} bytes`,
      );
    },
  );
});
