import { describe, expect, it } from "vitest";
import type { InboundMessage } from "./channel.js";
import { boundMessages, limitViolation, MESSAGE_LIMITS } from "./limits.js";

function message(raw: unknown, overrides: Partial<InboundMessage> = {}): InboundMessage {
  return {
    id: "m1",
    accountId: "acc",
    from: "491",
    type: "text",
    text: "hi",
    supported: true,
    raw,
    ...overrides,
  };
}

/** `{a:{a:…}}` `levels` objects deep, built without recursion. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe("per-message limits", () => {
  it("accepts a message nested exactly to the limit and refuses one level more", () => {
    expect(limitViolation(message(nested(MESSAGE_LIMITS.maxDepth)))).toBeUndefined();
    expect(limitViolation(message(nested(MESSAGE_LIMITS.maxDepth + 1)))).toMatch(/nested deeper than 32/);
  });

  it("measures 100,000 levels without overflowing the stack", () => {
    expect(limitViolation(message(nested(100_000)))).toMatch(/nested deeper/);
  });

  it("refuses over-long ids, senders, strings and object keys", () => {
    const long = "x".repeat(MESSAGE_LIMITS.maxKeyLength + 1);
    expect(limitViolation(message({}, { id: long }))).toMatch(/^Message id is 257 characters/);
    expect(limitViolation(message({}, { from: long }))).toMatch(/^Message sender/);
    const huge = "y".repeat(MESSAGE_LIMITS.maxStringLength + 1);
    expect(limitViolation(message({ text: huge }))).toMatch(/string of 65537/);
    expect(limitViolation(message({ [huge]: 1 }))).toMatch(/string of 65537/);
  });

  it("refuses a message over the byte limit, counting UTF-8 bytes", () => {
    const parts = Array.from({ length: 3 }, () => "é".repeat(45_000));
    expect(limitViolation(message({ parts }))).toMatch(/bytes; the limit is 262144/);
  });

  it("keys a rejection by its id, or by the id's hash when the id is too long to be a key", () => {
    const longId = "w".repeat(3_000);
    const { accepted, rejected } = boundMessages([
      message({ ok: true }, { id: "good" }),
      message(nested(40), { id: "deep" }),
      message({}, { id: longId, from: "s".repeat(400) }),
    ]);
    expect(accepted.map((m) => m.id)).toEqual(["good"]);
    expect(rejected[0]).toMatchObject({ key: "deep", from: "491", type: "text" });
    expect(rejected[1]?.key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(rejected[1]?.from).toHaveLength(MESSAGE_LIMITS.maxKeyLength);
  });
});
