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

/** The walk as it was before it was made allocation-light: the reference the new one must agree with. */
function referenceViolation(value: InboundMessage): string | undefined {
  const { maxKeyLength, maxMessageBytes, maxDepth, maxStringLength } = MESSAGE_LIMITS;
  for (const [field, text] of [
    ["id", value.id],
    ["account", value.accountId],
    ["sender", value.from],
    ["type", value.type],
  ] as const) {
    if (text.length > maxKeyLength) {
      return `Message ${field} is ${text.length} characters long; the limit is ${maxKeyLength}`;
    }
  }
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value: node, depth } = item;
    if (typeof node === "string") {
      if (node.length > maxStringLength) {
        return `Message has a string of ${node.length} characters; the limit is ${maxStringLength}`;
      }
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    if (depth > maxDepth) return `Message is nested deeper than ${maxDepth} levels`;
    if (Array.isArray(node)) {
      for (const element of node) stack.push({ value: element, depth: depth + 1 });
      continue;
    }
    for (const [key, element] of Object.entries(node)) {
      stack.push({ value: key, depth });
      stack.push({ value: element, depth: depth + 1 });
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > maxMessageBytes) return `Message is ${bytes} bytes; the limit is ${maxMessageBytes}`;
  return undefined;
}

describe("per-message limits: the allocation-light walk decides as the original one", () => {
  const huge = "y".repeat(MESSAGE_LIMITS.maxStringLength + 1);
  const hugeKey = "k".repeat(MESSAGE_LIMITS.maxStringLength + 2);
  const long = "x".repeat(MESSAGE_LIMITS.maxKeyLength + 1);
  const inherited = Object.create({ [huge]: huge }) as Record<string, unknown>;
  inherited.own = "fine";
  const cases: [string, InboundMessage][] = [
    ["a typical message", message({ from: "491", id: "wamid.1", text: { body: "hello" }, type: "text" })],
    ["deep, then a long string", message({ deep: nested(40), text: huge })],
    ["a long string, then deep", message({ text: huge, deep: nested(40) })],
    ["a long key and a long value", message({ [hugeKey]: huge })],
    ["a long key beside a deep value", message({ a: nested(40), [hugeKey]: 1 })],
    ["array elements of several violations", message([huge, nested(40), [hugeKey], { [hugeKey]: 1 }])],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is tested
    ["an array with holes", message([1, , huge])],
    ["integer-like keys (enumerated first)", message({ b: huge, 2: nested(40), 1: "x" })],
    ["inherited enumerable keys are not the message's", message(inherited)],
    ["a too-long id and sender together", message({ text: huge }, { id: long, from: long })],
    ["a too-long type only", message({}, { type: long })],
    ["exactly at every limit", message({ s: "z".repeat(MESSAGE_LIMITS.maxStringLength), n: nested(31) })],
    ["over the byte limit", message({ parts: Array.from({ length: 3 }, () => "é".repeat(45_000)) })],
    ["nested 100,000 levels", message(nested(100_000))],
    // The byte limit: cases where the walk's upper bound is above the limit, and where it cannot see.
    ["long plain strings, within the bytes but not the bound", message({ a: "a".repeat(60_000) })],
    [
      "escapes that make the text 6 times the string",
      message(Array.from({ length: 5 }, () => "\u0001".repeat(9_000))),
    ],
    ["numbers of the longest form", message(Array.from({ length: 11_000 }, () => -1.2345678901234567e-308))],
    ["a toJSON that writes more than the walk sees", message({ big: { toJSON: () => "t".repeat(300_000) } })],
    [
      "a Date and a class instance",
      message({
        when: new Date(0),
        box: new (class Box {
          n = 1;
        })(),
      }),
    ],
    ["a boxed string", message({ text: Object("x".repeat(1_000)) })],
  ];
  it.each(cases)("%s", (_label, value) => {
    expect(limitViolation(value)).toBe(referenceViolation(value));
  });

  // With this seed, 25 of the 60 messages are over the byte limit and 35 within it.
  it("agrees on random messages around the byte limit", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = ["a", "é", "✓", "😀", "\u0000", "\u001f", '"', "\\", "\ud800"];
    const text = (length: number) =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
    for (let round = 0; round < 60; round++) {
      const parts = Array.from({ length: 1 + Math.floor(random() * 8) }, () =>
        random() < 0.2
          ? random() * 1e300
          : { [text(3)]: text(Math.floor(random() * 40_000)), n: [null, true] },
      );
      const value = message(parts);
      expect(limitViolation(value)).toBe(referenceViolation(value));
    }
  });
});
