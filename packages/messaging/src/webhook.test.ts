import { describe, expect, it } from "vitest";
import { BodyBudget } from "./body-budget.js";
import { readWebhookRequest } from "./webhook.js";

const limits = () => ({
  maxBytes: 1024,
  timeoutMs: 1_000,
  idleTimeoutMs: 1_000,
  charge: new BodyBudget(4096).open(),
});

describe("readWebhookRequest", () => {
  it("parses the query of a GET (the handshake), once", async () => {
    const request = new Request("http://localhost/whatsapp/webhook?hub.mode=subscribe&hub.challenge=42");
    const read = await readWebhookRequest(request, limits());
    expect(read.query.get("hub.mode")).toBe("subscribe");
    expect(read.query.get("hub.challenge")).toBe("42");
    expect(read.query).toBe(read.query);
  });

  it("does not parse the URL of a POST until the query is read", async () => {
    // A URL that `new URL` refuses: reading the request must not touch it, reading the query must.
    const request = {
      method: "POST",
      url: "not a url",
      headers: new Headers({ "x-hub-signature-256": "sha256=00" }),
      body: null,
    } as unknown as Request;
    const read = await readWebhookRequest(request, limits());
    expect(read.method).toBe("POST");
    expect(read.headers.get("X-Hub-Signature-256")).toBe("sha256=00");
    expect(read.rawBody.byteLength).toBe(0);
    expect(() => read.query).toThrow(TypeError);
  });
});
