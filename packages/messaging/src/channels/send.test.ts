import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../errors.js";
import { MAX_ANSWER_BYTES } from "../limits.js";
import { postJson } from "./send.js";

// A chat-API stand-in whose answer each test sets; `chunked` sends it without a Content-Length.
describe("postJson reads a chat API's answer within MAX_ANSWER_BYTES", () => {
  let server: Server;
  let url: string;
  let answer = { status: 200, body: '{"ok":true}', chunked: false };

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(answer.status, { "content-type": "application/json", "retry-after": "7" });
        if (answer.chunked) {
          res.write(answer.body.slice(0, 10));
          res.end(answer.body.slice(10));
        } else {
          res.end(answer.body);
        }
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bot123:secret/sendMessage`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = () => postJson("Stand-in API", url, { body: { text: "hi" }, timeoutMs: 5_000 });

  it.each([false, true])(
    "returns status, hint, text and JSON of an ordinary answer (chunked: %s)",
    async (chunked) => {
      answer = { status: 429, body: '{"ok":false,"error":"ratelimited"}', chunked };
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
      answer = { status: 200, body: `{"ok":true,"pad":"${"x".repeat(MAX_ANSWER_BYTES)}"}`, chunked };
      const error = await send().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DeliveryError);
      expect(error).toMatchObject({ code: "SEND_FAILED", retryable: false });
      expect((error as Error).message).toBe(
        `Stand-in API answered 200 with a body over ${MAX_ANSWER_BYTES} bytes`,
      );
    },
  );
});
