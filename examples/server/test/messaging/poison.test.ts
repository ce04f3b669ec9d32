import { MESSAGE_LIMITS } from "@agent-platform/messaging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../databases.js";
import { type GraphStub, startGraphStub, waitFor } from "./support/graph-stub.js";
import { type MessagingTestServer, startMessagingServer } from "./support/server.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./support/whatsapp.js";

const POISON = '"__POISON__"';

/** A value nested `depth` levels deep, as JSON text: JSON.stringify of such an object would throw itself. */
function deepJson(depth: number): string {
  return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}

/**
 * Each kind of message that used to make the whole delivery fail in the database (or could), with the
 * raw JSON spliced into an otherwise normal text message.
 */
const poisons = [
  {
    kind: "a field nested 100,000 levels deep",
    message: (id: string) => ({ ...textMessage(id, "15553000001", "deep"), context: "__POISON__" }),
    splice: () => deepJson(100_000),
    reason: /nested deeper than 32 levels/,
  },
  {
    kind: "a 3,000-character message id",
    message: (_id: string) => textMessage("__POISON__", "15553000002", "long id"),
    splice: (id: string) => JSON.stringify(`${id}.${"x".repeat(3_000)}`),
    reason: /id is 30\d\d characters long; the limit is 256/,
  },
  {
    kind: "an oversize field",
    message: (id: string) => textMessage(id, "15553000003", "__POISON__"),
    splice: () => JSON.stringify("y".repeat(MESSAGE_LIMITS.maxStringLength + 1)),
    reason: /string of 65537 characters/,
  },
  {
    kind: "an oversize message made of fields within the limit",
    message: (id: string) => ({ ...textMessage(id, "15553000004", "big"), extra: "__POISON__" }),
    splice: () => JSON.stringify(Array.from({ length: 5 }, () => "z".repeat(60_000))),
    reason: /bytes; the limit is 262144/,
  },
  {
    kind: "a 300-character sender",
    message: (id: string) => textMessage(id, "__POISON__", "long sender"),
    splice: () => JSON.stringify("1".repeat(300)),
    reason: /sender is 300 characters long/,
  },
];

describe.each(BACKENDS)("WhatsApp delivery with a poison message on %s", (backend) => {
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

  it.each(poisons.map((poison, index) => ({ ...poison, index })))(
    "stores the good message, records $kind as rejected, and answers 200",
    async ({ message, splice, reason, index }) => {
      const good = `1555400000${index}`;
      const poisonId = `wamid.poison.${index}`;
      const body = JSON.stringify(
        delivery([textMessage(`wamid.good.${index}`, good, `good ${index}`), message(poisonId)]),
      ).replace(POISON, splice(poisonId));
      // Twice: Meta redelivers a batch it had no 200 for; the second time nothing new is stored.
      const first = await postDelivery(server.url, body);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ status: "accepted", received: 1, duplicates: 0, rejected: 1 });
      const again = await postDelivery(server.url, body);
      expect(await again.json()).toEqual({ status: "accepted", received: 0, duplicates: 2, rejected: 0 });

      await waitFor("the good reply", () => graph.accepted().some((r) => r.body.to === good));
      const rejected = (await server.inbox("rejected")).filter((row) => row.last_error?.match(reason));
      expect(rejected).toHaveLength(1);
      expect(rejected[0]).toMatchObject({ status: "rejected", attempts: 0 });
      expect(rejected[0]?.message_id.length).toBeLessThanOrEqual(MESSAGE_LIMITS.maxKeyLength);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The good one is answered once; the rejected one never (it is not handed to the worker).
      expect(graph.requests.filter((r) => r.body.to === good)).toHaveLength(1);
      expect(graph.requests.filter((r) => r.body.to?.startsWith("1555300000"))).toHaveLength(0);
    },
  );

  it("records every kind of poison of one delivery and stores its good messages", async () => {
    const messages = poisons.map((poison, index) => {
      const id = `wamid.mixed.${index}`;
      return JSON.stringify(poison.message(id)).replace(POISON, poison.splice(id));
    });
    const good = textMessage("wamid.mixed.good", "15554100000", "mixed good");
    const body = JSON.stringify(delivery([good, "__MESSAGES__" as unknown as object])).replace(
      '"__MESSAGES__"',
      messages.join(","),
    );
    const response = await postDelivery(server.url, body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: "accepted",
      received: 1,
      duplicates: 0,
      rejected: poisons.length,
    });
    await waitFor("the good reply", () => graph.accepted().some((r) => r.body.to === "15554100000"));
  });
});
