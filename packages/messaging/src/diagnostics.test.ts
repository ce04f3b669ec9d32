import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { postJson } from "./channels/send.js";
import { OUTBOUND_REQUEST_CHANNEL, type OutboundRequestEvent } from "./diagnostics.js";

describe("outbound request events", () => {
  const events: OutboundRequestEvent[] = [];
  const listener = (message: unknown) => events.push(message as OutboundRequestEvent);
  afterEach(() => {
    unsubscribe(OUTBOUND_REQUEST_CHANNEL, listener);
    events.length = 0;
  });

  it("publishes each request's target, status (null without an answer) and duration, only to subscribers", async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(req.url === "/limited" ? 429 : 200, { "content-type": "application/json" }).end("{}");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await postJson("Agent", `${base}/ok`, { body: {}, timeoutMs: 2_000 });
      expect(events).toEqual([]);
      subscribe(OUTBOUND_REQUEST_CHANNEL, listener);
      await postJson("Agent", `${base}/ok`, { body: {}, timeoutMs: 2_000 });
      await postJson("Graph API", `${base}/limited`, { body: {}, timeoutMs: 2_000 });
      await postJson("Slack API", `${base}/ok`, { body: {}, timeoutMs: 2_000 });
      await postJson("Telegram Bot API", `${base}/ok`, { body: {}, timeoutMs: 2_000 });
      // Nothing listens on port 9: no answer, so no status.
      await expect(
        postJson("Agent", "http://127.0.0.1:9/x", { body: {}, timeoutMs: 2_000 }),
      ).rejects.toThrow();
      // An API this package does not name is not a target: no event, so the label stays bounded.
      await postJson("Some other API", `${base}/ok`, { body: {}, timeoutMs: 2_000 });
    } finally {
      server.close();
    }
    expect(events.map(({ target, statusCode }) => [target, statusCode])).toEqual([
      ["agent", 200],
      ["whatsapp", 429],
      ["slack", 200],
      ["telegram", 200],
      ["agent", null],
    ]);
    for (const event of events) expect(event.durationMs).toBeGreaterThanOrEqual(0);
  });
});
