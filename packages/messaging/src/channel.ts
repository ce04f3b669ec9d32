import type { SendPacing } from "./pacing.js";

/**
 * What a chat product has to provide to be served by the webhook and the inbox worker. Each one is a
 * folder under `channels/`.
 */

/**
 * The request headers a channel reads (the platform's one HeaderReader): a WHATWG `Headers`, or the reader
 * the webhook builds over a Node request, which answers exactly as that `Headers` would.
 */
export type { HeaderReader } from "@agent-platform/common";

import type { HeaderReader } from "@agent-platform/common";

/** Answer to a subscription handshake (`GET /{channel}/webhook`). */
export type HandshakeResult =
  | { ok: true; challenge: string }
  | { ok: false; status: 400 | 403 | 500; errorCode: string; detail: string };

/** Media attached to an inbound message (the chat product's id; the bytes are fetched on demand). */
export interface InboundMedia {
  id: string;
  mimeType?: string;
  filename?: string;
}

/** One user message, normalised at parse time and stored in the inbox as it is. */
export interface InboundMessage {
  /** The chat product's message id: the inbox's deduplication key. */
  id: string;
  /** The account (WhatsApp: phone number id) that received the message and sends the reply. */
  accountId: string;
  /** The sender's address (WhatsApp: the sender's phone number; Slack: the user id). */
  from: string;
  /** Where the reply goes when that is not the sender (Slack: the channel; Telegram: the chat). */
  conversation?: string;
  /** The thread the reply goes in (Slack: `thread_ts`). */
  thread?: string;
  /** The chat product's message type (`text`, `image`, `interactive`, ...). */
  type: string;
  /** The text to hand to the agent; a caption or a button title for non-text types. */
  text: string;
  media?: InboundMedia;
  /** False for types the channel cannot hand to an agent; they get a fixed reply instead. */
  supported: boolean;
  /**
   * True for an event about the conversation rather than something the user wrote (WhatsApp's system
   * messages: a changed number or user id): stored for the record, handed to no agent, never answered.
   */
  notice?: boolean;
  /**
   * When the chat product stamped the message, in milliseconds since 1970 (WhatsApp's `timestamp`, Telegram's
   * `date`, Slack's `ts`): the order of a conversation's messages, ties broken by arrival. Absent: the arrival time.
   */
  sentAt?: number;
  /** The message exactly as the chat product sent it. */
  raw: unknown;
}

/**
 * A message (or an event, or a part of a delivery holding messages) that fails its channel's schema: a
 * chat product that renames, drops or retypes a field must not cost the delivery's other messages. It
 * is stored as a `rejected` row with its reason and, within the message limits, its content, and never
 * answered; the delivery is still acknowledged.
 */
export interface InvalidMessage {
  /** Its id when it has a string one; otherwise the inbox keys it by a hash of its content. */
  id?: string | undefined;
  accountId?: string | undefined;
  from?: string | undefined;
  type?: string | undefined;
  /** Where and what, e.g. `entry.0.changes.0.value.messages.1: no sender`. */
  reason: string;
  /** As the chat product sent it. */
  raw: unknown;
}

/** The result of parsing one webhook delivery. */
export type ParsedDelivery =
  | { kind: "ignored" }
  /** A handshake carried in a POST body (Slack's `url_verification`): answered with the challenge. */
  | { kind: "challenge"; challenge: string }
  | {
      kind: "events";
      messages: InboundMessage[];
      /** What failed the schema; stored as rejected. */
      invalid?: InvalidMessage[] | undefined;
      statuses: number;
    };

/** A reply to one inbound message. */
export interface OutboundReply {
  accountId: string;
  to: string;
  text: string;
  thread?: string;
}

/** What a worker passes to each outbound call it makes (the agent's, a channel's send). */
export interface CallOptions {
  /** Aborted when the worker stops at its deadline: give the call up at once; the message is retried later. */
  signal?: AbortSignal | undefined;
}

/** A chat product as the inbox uses it: request check, parsing, sending; `slack()`, `telegram()` and `whatsapp()` make one. */
export interface Channel extends ChannelRoute {
  /** The URL segment (`/{name}/status`, `/{name}/inbox`) and the inbox's channel column. */
  readonly name: string;
  /** Where the chat product posts its deliveries. */
  readonly webhookPath: string;
  /** Fixed reply for message types the channel does not support. */
  readonly unsupportedReply: string;
  /**
   * The longest one `send` may take (its timeout): a worker's lease must outlast it, or another worker
   * could claim the message mid-send and answer it twice. `createMessaging` checks `worker.leaseMs` against it.
   */
  readonly sendTimeoutMs?: number | undefined;
  /**
   * Set when the channel accepts requests it cannot authenticate (a development setting), naming the
   * option that made it so: `createMessaging` refuses such a channel in production and warns elsewhere.
   */
  readonly unauthenticated?: string | undefined;
  /**
   * How fast replies go out, per chat and per sending account, shared by every process on the database;
   * absent: not paced.
   */
  readonly pacing?: SendPacing | undefined;
  /** Subscription handshake from the query of a GET on the webhook path; absent: GET is not allowed. */
  verifyHandshake?(query: URLSearchParams): Promise<HandshakeResult>;
  /**
   * True when the raw request really comes from the chat product (signature over the raw bytes). A
   * promise: the checks run on WebCrypto, whose operations are asynchronous on every runtime.
   */
  authenticate(headers: HeaderReader, rawBody: Uint8Array): Promise<boolean>;
  /**
   * Every message of a delivery, and every part that fails the channel's schema as `invalid`. Throws
   * InvalidPayloadError (answered 400) only for a body that is not the channel's envelope at all.
   */
  parseDelivery(body: unknown): ParsedDelivery;
  /** Splits a reply into the messages the chat product accepts (length limit). */
  splitReply(text: string): string[];
  /**
   * Sends one part of a reply; throws DeliveryError saying whether a retry can help. When `options.signal`
   * aborts (the worker is stopping) the call is given up at once, whatever its own timeout.
   */
  send(reply: OutboundReply, options?: CallOptions): Promise<void>;
  /** Conversation id handed to the agent, stable per conversation. */
  sessionId(message: Pick<InboundMessage, "accountId" | "from" | "conversation" | "thread">): string;
}

/** Where a channel is mounted and how its requests authenticate: data for routers and API docs. */
export interface ChannelRoute {
  /** `/{name}/status`, `/{name}/inbox`, and the inbox's channel column. */
  name: string;
  webhookPath: string;
  /**
   * How the chat product checks the URL: a GET with a query (WhatsApp), a POST whose body carries a
   * challenge (Slack's `url_verification`), or not at all (Telegram).
   */
  handshake: "query" | "body" | "none";
  /** Request headers that authenticate a delivery, with what they carry (for the API description). */
  authHeaders: Record<string, string>;
}
