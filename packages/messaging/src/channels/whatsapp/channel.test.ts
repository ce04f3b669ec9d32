import { type StubServer, startStubServer } from "@agent-platform/test-support/stub-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../../errors.js";
import { createWhatsAppChannel } from "./channel.js";

describe("WhatsApp channel send", () => {
  let server: StubServer;
  let status = 200;
  let channel: ReturnType<typeof createWhatsAppChannel>;

  beforeAll(async () => {
    server = await startStubServer(() => ({
      status,
      headers: status === 429 ? { "retry-after": "7" } : {},
      body: status < 300 ? { messages: [{ id: "x" }] } : { error: { message: "nope" } },
    }));
    channel = createWhatsAppChannel({
      verifyToken: "v",
      appSecret: "s",
      accessToken: "access",
      phoneNumberId: "1",
      apiBaseUrl: `${server.url}/v25.0/`,
      apiTimeoutMs: 2_000,
    });
  });
  afterAll(() => server.close());

  it("posts a text message from the receiving number with the access token", async () => {
    status = 200;
    await channel.send({ accountId: "555", to: "491", text: "hello" });
    const seen = server.requests.at(-1);
    expect(seen?.url).toBe("/v25.0/555/messages");
    expect(seen?.headers.authorization).toBe("Bearer access");
    expect(JSON.parse(seen?.body ?? "")).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "491",
      type: "text",
      text: { preview_url: false, body: "hello" },
    });
  });

  it("addresses anything but a phone number (digits only, as WhatsApp writes them) with recipient: a BSUID", async () => {
    status = 200;
    for (const bsuid of ["US.13491208655302741918", "US.ENT.11815799212886844830", "+491"]) {
      await channel.send({ accountId: "555", to: bsuid, text: "hello" });
      expect(JSON.parse(server.requests.at(-1)?.body ?? "")).toEqual({
        messaging_product: "whatsapp",
        recipient_type: "individual",
        recipient: bsuid,
        type: "text",
        text: { preview_url: false, body: "hello" },
      });
    }
  });

  it.each([
    [500, true],
    [502, true],
    [429, true],
    [400, false],
    [401, false],
    [404, false],
  ])("classifies a %i as retryable: %s, with the Graph API's message", async (code, retryable) => {
    status = code;
    const error = await channel.send({ accountId: "1", to: "2", text: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect(error).toMatchObject({
      code: "SEND_FAILED",
      retryable,
      message: `Graph API answered ${code}: nope`,
    });
  });

  it("carries a 429's Retry-After to the retry, and no hint without one", async () => {
    status = 429;
    const limited = await channel.send({ accountId: "1", to: "2", text: "x" }).catch((e: unknown) => e);
    expect(limited).toMatchObject({ retryable: true, retryAfterMs: 7_000 });
    status = 503;
    const down = await channel.send({ accountId: "1", to: "2", text: "x" }).catch((e: unknown) => e);
    expect(down).toMatchObject({ retryable: true, retryAfterMs: undefined });
  });

  it("names the session by phone number id and sender", () => {
    expect(channel.sessionId({ accountId: "123", from: "491" })).toBe("whatsapp:123:491");
  });
});
