import { createHash } from "node:crypto";
import type { InboundMessage } from "./channel.js";

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

/** A message that broke a limit: stored as a `rejected` row (never answered) so the operator can see it. */
export interface RejectedMessage {
  /** The message id, or `sha256:<hex of the id>` when the id itself is too long to be a key. */
  key: string;
  accountId: string;
  from: string;
  type: string;
  reason: string;
}

/** Splits a delivery's messages into those within the limits and those to record as rejected. */
export function boundMessages(messages: readonly InboundMessage[]): {
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
  return { accepted, rejected };
}

/** What is wrong with `message`, or undefined when it is within every limit. */
export function limitViolation(message: InboundMessage): string | undefined {
  const keyViolation =
    keyLengthViolation("id", message.id) ??
    keyLengthViolation("account", message.accountId) ??
    keyLengthViolation("sender", message.from) ??
    keyLengthViolation("type", message.type);
  if (keyViolation !== undefined) return keyViolation;
  const shape = shapeViolation(message);
  if (shape !== undefined) return shape;
  // Safe now: the depth is bounded, so JSON.stringify cannot overflow the stack.
  const { maxMessageBytes } = MESSAGE_LIMITS;
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
 * Depth and string lengths of everything in the message, walked with an explicit stack (no recursion, so
 * no stack overflow) that stops descending at the first level past the limit.
 *
 * It runs on every message of every delivery, so the stack is two parallel arrays (value, depth) rather
 * than an object per node, and an object's keys are read with for...in and an own-property check rather
 * than `Object.entries`, which allocated an array per key. The visiting order is the one the walk always
 * had (each key pushed just before its value, popped last in, first out), so a message that breaks
 * several limits still reports the same one.
 */
function shapeViolation(message: InboundMessage): string | undefined {
  const { maxDepth, maxStringLength } = MESSAGE_LIMITS;
  const values: unknown[] = [message];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop() as number;
    if (typeof value === "string") {
      if (value.length > maxStringLength) {
        return `Message has a string of ${value.length} characters; the limit is ${maxStringLength}`;
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    // The normalised message is level 0, so `raw` (the chat product's message) is level 1.
    if (depth > maxDepth) return `Message is nested deeper than ${maxDepth} levels`;
    if (Array.isArray(value)) {
      // By index: a hole reads as undefined, as the array iterator yields it.
      for (let index = 0; index < value.length; index++) {
        values.push(value[index]);
        depths.push(depth + 1);
      }
      continue;
    }
    const object = value as Record<string, unknown>;
    // Own enumerable string keys in Object.entries' order; inherited enumerable keys are skipped.
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      values.push(key, object[key]);
      depths.push(depth, depth + 1);
    }
  }
  return undefined;
}

function rejectionOf(message: InboundMessage, reason: string): RejectedMessage {
  const { maxKeyLength } = MESSAGE_LIMITS;
  const key =
    message.id.length <= maxKeyLength
      ? message.id
      : `sha256:${createHash("sha256").update(message.id).digest("hex")}`;
  return {
    key,
    accountId: message.accountId.slice(0, maxKeyLength),
    from: message.from.slice(0, maxKeyLength),
    type: message.type.slice(0, maxKeyLength),
    reason,
  };
}
