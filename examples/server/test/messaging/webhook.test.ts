import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../databases.js";
import { type GraphStub, startGraphStub, waitFor } from "./support/graph-stub.js";
import { type MessagingTestServer, startMessagingServer } from "./support/server.js";
import {
  ACCESS_TOKEN,
  APP_SECRET,
  channelEnv,
  delivery,
  PHONE_NUMBER_ID,
  postDelivery,
  textMessage,
  VERIFY_TOKEN,
} from "./support/whatsapp.js";

describe.each(BACKENDS)("WhatsApp webhook on %s", (backend) => {
  let graph: GraphStub;
  let server: MessagingTestServer;

  beforeAll(async () => {
    graph = await startGraphStub();
    server = await startMessagingServer(backend, channelEnv(graph.url));
  });
  afterAll(async () => {
    await server?.stop();
    await graph?.close();
  });

  describe("GET /whatsapp/webhook handshake", () => {
    const handshake = (query: Record<string, string>) =>
      fetch(`${server.url}/whatsapp/webhook?${new URLSearchParams(query)}`);

    it("answers the challenge as text/plain for the right token", async () => {
      const response = await handshake({
        "hub.mode": "subscribe",
        "hub.verify_token": VERIFY_TOKEN,
        "hub.challenge": "1158201444",
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await response.text()).toBe("1158201444");
    });

    it("is 400 without a challenge", async () => {
      const response = await handshake({ "hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ detail: "Missing hub.challenge", error_code: "BAD_REQUEST" });
    });

    it.each([
      ["a wrong token", { "hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1" }],
      ["a wrong mode", { "hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1" }],
      ["no token", { "hub.mode": "subscribe", "hub.challenge": "1" }],
    ])("is 403 for %s", async (_, query) => {
      const response = await handshake(query);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ detail: "Verification failed", error_code: "FORBIDDEN" });
    });
  });

  describe("POST /whatsapp/webhook", () => {
    const invalidSignature = { detail: "Invalid signature", error_code: "FORBIDDEN" };
    const body = delivery([textMessage("wamid.sig", "15550001111", "hello")]);
    const raw = JSON.stringify(body);

    it.each([
      ["missing", { signature: null }],
      ["wrong", { signature: `sha256=${"0".repeat(64)}` }],
      ["not prefixed with sha256=", { signature: signatureHex(raw) }],
      ["made with another secret", { secret: "another-secret" }],
      ["malformed", { signature: "sha256=zz" }],
    ])("is 403 with a %s signature and stores nothing", async (_, options) => {
      const response = await postDelivery(server.url, raw, options);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual(invalidSignature);
      expect(await server.inboxIds()).not.toContain("wamid.sig");
    });

    it("is 413 for a body over 1 MiB by Content-Length, before reading it", async () => {
      const big = JSON.stringify({ object: "whatsapp_business_account", pad: "x".repeat(1024 * 1024) });
      const response = await postDelivery(server.url, big);
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ error_code: "PAYLOAD_TOO_LARGE" });
    });

    it("is 413 for a chunked body that grows over 1 MiB, without reading the rest", async () => {
      const { status, body: answer } = await postChunked(`${server.url}/whatsapp/webhook`, 64 * 1024, 64);
      expect(status).toBe(413);
      expect(JSON.parse(answer)).toMatchObject({ error_code: "PAYLOAD_TOO_LARGE" });
    });

    it("survives a client that goes away mid-body, and stores the delivery when it is sent again", async () => {
      const payload = JSON.stringify(delivery([textMessage("wamid.cut", "15550002222", "cut short")]));
      await postHalfAndHangUp(`${server.url}/whatsapp/webhook`, payload, `sha256=${signatureHex(payload)}`);
      expect(await server.inboxIds()).not.toContain("wamid.cut");
      const response = await postDelivery(server.url, payload);
      expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
    });

    it("is 400 for invalid JSON behind a valid signature", async () => {
      const response = await postDelivery(server.url, "{not json");
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ detail: "Body is not valid JSON", error_code: "BAD_REQUEST" });
    });

    it("is 400 for a delivery of the wrong shape", async () => {
      const response = await postDelivery(server.url, { object: "whatsapp_business_account", entry: {} });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error_code: "BAD_REQUEST" });
    });

    it("ignores another object", async () => {
      const response = await postDelivery(server.url, { object: "page", entry: [] });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: "ignored" });
    });

    it("stores every message of every entry and change and answers each once", async () => {
      const payload = delivery(
        [
          textMessage("wamid.multi.1", "15550000001", "one"),
          textMessage("wamid.multi.2", "15550000002", "two"),
        ],
        [textMessage("wamid.multi.3", "15550000003", "three")],
      );
      const response = await postDelivery(server.url, payload);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: "accepted", received: 3, duplicates: 0 });
      expect(await server.inboxIds()).toEqual(
        expect.arrayContaining(["wamid.multi.1", "wamid.multi.2", "wamid.multi.3"]),
      );
      await waitFor(
        "three replies",
        () => graph.accepted().filter((r) => r.body.to?.startsWith("1555000000")).length >= 3,
      );
      const replies = graph.accepted().filter((r) => r.body.to?.startsWith("1555000000"));
      expect(replies.map((r) => [r.body.to, r.body.text?.body]).sort()).toEqual([
        ["15550000001", "one"],
        ["15550000002", "two"],
        ["15550000003", "three"],
      ]);
      for (const reply of replies) {
        expect(reply.method).toBe("POST");
        expect(reply.path).toBe(`/${PHONE_NUMBER_ID}/messages`);
        expect(reply.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
        expect(reply.body).toMatchObject({ messaging_product: "whatsapp", type: "text" });
      }
    });

    it("stores a message containing U+0000, which jsonb cannot hold, with U+FFFD instead", async () => {
      const response = await postDelivery(
        server.url,
        delivery([textMessage("wamid.nul", "15550007777", "a\u0000b")]),
      );
      expect(await response.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
      await waitFor("the reply", () => graph.accepted().some((r) => r.body.to === "15550007777"));
      expect(graph.accepted().find((r) => r.body.to === "15550007777")?.body.text?.body).toBe("a\uFFFDb");
    });

    it("treats a status-only delivery as no messages", async () => {
      const payload = {
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
                  statuses: [{ id: "wamid.reply.1", status: "delivered", recipient_id: "15550000001" }],
                },
              },
            ],
          },
        ],
      };
      const response = await postDelivery(server.url, payload);
      expect(await response.json()).toEqual({ status: "accepted", received: 0, duplicates: 0 });
    });

    it("stores a redelivered message once and replies once", async () => {
      const payload = delivery([textMessage("wamid.twice", "15550009999", "only once")]);
      const first = await postDelivery(server.url, payload);
      expect(await first.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
      const second = await postDelivery(server.url, payload);
      expect(await second.json()).toEqual({ status: "accepted", received: 0, duplicates: 1 });
      await waitFor("the reply", () => graph.accepted().some((r) => r.body.to === "15550009999"));
      // A third delivery after the reply went out must not produce another one either.
      const third = await postDelivery(server.url, payload);
      expect(await third.json()).toEqual({ status: "accepted", received: 0, duplicates: 1 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(graph.requests.filter((r) => r.body.to === "15550009999")).toHaveLength(1);
    });
  });

  it("GET /whatsapp/status says the channel is configured", async () => {
    const response = await fetch(`${server.url}/whatsapp/status`);
    expect(await response.json()).toEqual({ channel: "whatsapp", configured: true });
  });
});

function signatureHex(raw: string): string {
  return createHmac("sha256", APP_SECRET).update(raw).digest("hex");
}

/** Declares the whole body's length, sends the first half, then drops the connection before any answer. */
function postHalfAndHangUp(url: string, body: string, signature: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const bytes = Buffer.from(body);
    const req = httpRequest(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(bytes.byteLength),
        "x-hub-signature-256": signature,
      },
    });
    req.on("response", () => reject(new Error("the server answered an incomplete body")));
    req.on("error", () => undefined);
    req.on("close", () => resolve());
    req.write(bytes.subarray(0, bytes.byteLength >> 1), () => {
      // Give the server a moment to start reading before hanging up.
      setTimeout(() => req.destroy(), 50);
    });
  });
}

/**
 * Streams `count` chunks of `size` bytes with chunked transfer encoding (no Content-Length) and returns the
 * answer; stops writing once the server answered, as a real client would.
 */
function postChunked(url: string, size: number, count: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json" } });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(size, "a");
    let written = 0;
    const writeNext = () => {
      if (answered || req.destroyed) return;
      if (written === count) {
        req.end();
        return;
      }
      written++;
      if (req.write(chunk)) setImmediate(writeNext);
      else req.once("drain", writeNext);
    };
    writeNext();
  });
}
