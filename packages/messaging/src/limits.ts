import { createHash } from "node:crypto";
import type { InboundMessage, InvalidMessage } from "./channel.js";

/**
 * The bounds every inbound message must stay within, whatever its channel. They are checked per message at
 * parse time, so one message that breaks them is recorded as rejected instead of making the whole delivery
 * fail in the database (a value nested 100,000 deep makes JSON.stringify throw; an id of a few thousand
 * characters does not fit PostgreSQL's index) and be redelivered, good messages and all, until it is dropped.
 */
export const MESSAGE_LIMITS = {
  /** Nesting of objects and arrays in the message as the chat product sent it. Real messages nest < 10. */
  maxDepth: 32,
  /** Id, account, sender and type: they are indexed columns and log fields. */
  maxKeyLength: 256,
  /** Any string in the message, object keys included (UTF-16 code units). Slack allows 40,000-char texts. */
  maxStringLength: 65_536,
  /** The whole message as stored (UTF-8 bytes of its JSON). */
  maxMessageBytes: 256 * 1024,
} as const;

/**
 * The largest answer read from the agent or a chat product's API. Agent replies are split into chat-sized
 * parts anyway, and chat APIs answer a send with a few hundred bytes.
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * A message that broke a limit or failed its channel's schema: stored as a `rejected` row (never answered)
 * so the operator can see it.
 */
export interface RejectedMessage {
  /**
   * The message id; `sha256:<hex of the id>` when the id itself is too long to be a key; `content:sha256:<hex>`
   * of the message's JSON for a message without an id (so a redelivery of it is a duplicate).
   */
  key: string;
  accountId: string;
  from: string;
  type: string;
  reason: string;
  /** A message that failed its schema, as the chat product sent it, when it is within the limits. */
  raw?: unknown;
}

/**
 * Splits a delivery's messages into those within the limits and those to record as rejected, which
 * include every message that failed its channel's schema (`invalid`).
 */
export function boundMessages(
  messages: readonly InboundMessage[],
  invalid: readonly InvalidMessage[] = [],
): {
  accepted: InboundMessage[];
  rejected: RejectedMessage[];
} {
  const accepted: InboundMessage[] = [];
  const rejected: RejectedMessage[] = [];
  for (const message of messages) {
    const reason = limitViolation(message);
    if (reason === undefined) accepted.push(message);
    else rejected.push(rejectionOf(message, reason));
  }
  for (const each of invalid) rejected.push(rejectionOfInvalid(each));
  return { accepted, rejected };
}

/**
 * The row of a message that failed its schema. Its content is kept when it is within the limits (its
 * nesting and strings bounded, so JSON.stringify cannot overflow), and keys it when it has no id.
 */
function rejectionOfInvalid(invalid: InvalidMessage): RejectedMessage {
  const { maxKeyLength, maxMessageBytes } = MESSAGE_LIMITS;
  const shape = measureShape(invalid.raw);
  let json: string | undefined;
  if (shape.violation === undefined) {
    const text = JSON.stringify(invalid.raw) ?? "null";
    if (Buffer.byteLength(text) <= maxMessageBytes) json = text;
  }
  const reason = `Invalid message: ${invalid.reason}`.slice(0, MESSAGE_LIMITS.maxStringLength);
  const key =
    invalid.id === undefined
      ? `content:sha256:${sha256Hex(json ?? reason)}`
      : invalid.id.length <= maxKeyLength
        ? invalid.id
        : `sha256:${sha256Hex(invalid.id)}`;
  return {
    key,
    accountId: (invalid.accountId ?? "").slice(0, maxKeyLength),
    from: (invalid.from ?? "").slice(0, maxKeyLength),
    type: (invalid.type ?? "").slice(0, maxKeyLength),
    reason,
    ...(json === undefined ? {} : { raw: invalid.raw }),
  };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** What is wrong with `message`, or undefined when it is within every limit. */
export function limitViolation(message: InboundMessage): string | undefined {
  const keyViolation =
    keyLengthViolation("id", message.id) ??
    keyLengthViolation("account", message.accountId) ??
    keyLengthViolation("sender", message.from) ??
    keyLengthViolation("type", message.type);
  if (keyViolation !== undefined) return keyViolation;
  const shape = measureShape(message);
  if (shape.violation !== undefined) return shape.violation;
  const { maxMessageBytes } = MESSAGE_LIMITS;
  // Within the limit for certain: the JSON text is not made at all (it is made again when stored).
  if (shape.jsonBytesAtMost <= maxMessageBytes) return undefined;
  // Safe now: the depth is bounded, so JSON.stringify cannot overflow the stack.
  const bytes = Buffer.byteLength(JSON.stringify(message));
  if (bytes > maxMessageBytes) return `Message is ${bytes} bytes; the limit is ${maxMessageBytes}`;
  return undefined;
}

/** Checked field by field rather than over a table of pairs, which cost five arrays per message. */
function keyLengthViolation(field: string, value: string): string | undefined {
  const { maxKeyLength } = MESSAGE_LIMITS;
  if (value.length <= maxKeyLength) return undefined;
  return `Message ${field} is ${value.length} characters long; the limit is ${maxKeyLength}`;
}

/**
 * Upper bounds on the UTF-8 bytes JSON.stringify writes for a value: a UTF-16 code unit of a string is at
 * most 6 bytes (`\uXXXX`; unescaped it is at most 3), plus the quotes; a number at most 25 characters
 * (`-1.2345678901234567e-308`, `-0.0000012345678901234567`), counted as 32; `false`, `null` and what
 * becomes `null` or is left out at most 5.
 */
const STRING_QUOTES_BYTES = 2;
const STRING_UNIT_BYTES_AT_MOST = 6;
const NUMBER_BYTES_AT_MOST = 32;
const OTHER_BYTES_AT_MOST = 5;

/**
 * A message's shape: the first violation of its depth or string-length limits, and an upper bound on the
 * UTF-8 bytes of its JSON text (Infinity where JSON.stringify could write something the walk does not
 * see: a `toJSON` method, an object other than a plain object or array, a bigint, which makes it throw).
 */
interface Shape {
  violation: string | undefined;
  jsonBytesAtMost: number;
}

/**
 * Depth and string lengths of everything in the message, walked with an explicit stack (no recursion, so
 * no stack overflow) that stops descending at the first level past the limit; on the way it adds up an
 * upper bound on the bytes of the message's JSON, so that a message well within the byte limit (nearly
 * all) need not be stringified just to be measured.
 *
 * It runs on every message of every delivery, so the stack is two parallel arrays (value, depth) rather
 * than an object per node, and an object's keys are read with for...in and an own-property check rather
 * than `Object.entries`, which allocated an array per key. The visiting order is the one the walk always
 * had (each key pushed just before its value, popped last in, first out), so a message that breaks
 * several limits still reports the same one.
 */
function measureShape(message: unknown): Shape {
  const { maxDepth, maxStringLength } = MESSAGE_LIMITS;
  const values: unknown[] = [message];
  const depths: number[] = [0];
  let bytes = 0;
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop() as number;
    if (typeof value === "string") {
      if (value.length > maxStringLength) {
        return violation(
          `Message has a string of ${value.length} characters; the limit is ${maxStringLength}`,
        );
      }
      bytes += STRING_QUOTES_BYTES + STRING_UNIT_BYTES_AT_MOST * value.length;
      continue;
    }
    if (typeof value === "number") {
      bytes += NUMBER_BYTES_AT_MOST;
      continue;
    }
    if (typeof value === "bigint") {
      bytes = Number.POSITIVE_INFINITY;
      continue;
    }
    if (typeof value !== "object" || value === null) {
      bytes += OTHER_BYTES_AT_MOST;
      continue;
    }
    // The normalised message is level 0, so `raw` (the chat product's message) is level 1.
    if (depth > maxDepth) return violation(`Message is nested deeper than ${maxDepth} levels`);
    if (!isPlainData(value)) bytes = Number.POSITIVE_INFINITY;
    // Brackets, and a comma (or colon) per element; an object's key is a string pushed on its own.
    bytes += 2;
    if (Array.isArray(value)) {
      // By index: a hole reads as undefined, as the array iterator yields it.
      for (let index = 0; index < value.length; index++) {
        values.push(value[index]);
        depths.push(depth + 1);
      }
      bytes += value.length;
      continue;
    }
    const object = value as Record<string, unknown>;
    // Own enumerable string keys in Object.entries' order; inherited enumerable keys are skipped.
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      values.push(key, object[key]);
      depths.push(depth, depth + 1);
      bytes += 2;
    }
  }
  return { violation: undefined, jsonBytesAtMost: bytes };
}

function violation(reason: string): Shape {
  return { violation: reason, jsonBytesAtMost: Number.POSITIVE_INFINITY };
}

/** An array or a plain object without `toJSON`: JSON.stringify writes exactly what the walk visits. */
function isPlainData(value: object): boolean {
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function rejectionOf(message: InboundMessage, reason: string): RejectedMessage {
  const { maxKeyLength } = MESSAGE_LIMITS;
  const key = message.id.length <= maxKeyLength ? message.id : `sha256:${sha256Hex(message.id)}`;
  return {
    key,
    accountId: message.accountId.slice(0, maxKeyLength),
    from: message.from.slice(0, maxKeyLength),
    type: message.type.slice(0, maxKeyLength),
    reason,
  };
}
