import type { IncomingMessage } from "node:http";
import type { Logger } from "@agent-platform/common";
import {
  inSpan,
  nodeHeaderReader,
  SpanKinds,
  type TraceSpan,
  traceparentOf,
} from "@agent-platform/common/internal";
import type { Channel, HeaderReader, ParsedDelivery } from "./channel.js";
import { InvalidPayloadError, PayloadTooLargeError } from "./errors.js";
import type { InboxStore, InsertCounts } from "./inbox/store.js";
import { boundMessages } from "./limits.js";
import { type BodyReadLimits, readRawBody } from "./read-body.js";
import { messagingTracer, SPANS } from "./tracing.js";

/** Chat products' deliveries are a few KiB; the cap only has to stop abuse. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** Refuses malformed UTF-8 instead of replacing it; one decoder serves every request (decode keeps no state). */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A webhook request, framework-free: what any HTTP stack can hand over. */
export interface WebhookRequest {
  method: string;
  /** Read by the GET handshake only. */
  query: URLSearchParams;
  /** A Fetch `Headers`, or anything that answers `get` as it would (see HeaderReader). */
  headers: HeaderReader;
  /** The body exactly as received: signatures are computed over these bytes. */
  rawBody: Uint8Array;
}

/** What to answer; `body` is JSON text for `application/json`. */
export interface WebhookResponse {
  status: number;
  contentType: "application/json" | "text/plain";
  body: string;
}

/** What the webhook of one configured channel needs. */
export interface WebhookDeps {
  channel: Channel;
  store: InboxStore;
  logger: Logger;
  /** Called after new messages were committed to the inbox. */
  onStored(): void;
}

export function jsonResponse(status: number, body: unknown): WebhookResponse {
  return { status, contentType: "application/json", body: JSON.stringify(body) };
}

function errorResponse(status: number, errorCode: string, detail: string): WebhookResponse {
  return jsonResponse(status, { detail, error_code: errorCode });
}

/**
 * Reads a Fetch `Request` into a WebhookRequest, its body under `limits` (see readRawBody; `maxBytes` is
 * MAX_WEBHOOK_BODY_BYTES for the webhooks). On @hono/node-server pass the Node request as `incoming`: the body
 * and the headers (see nodeHeaderReader) are then read from it, sparing the adapter's WHATWG objects. Throws
 * PayloadTooLargeError, BodiesBusyError, BodyTimeoutError or RequestAbortedError.
 */
export async function readWebhookRequest(
  request: Request,
  limits: BodyReadLimits,
  incoming?: IncomingMessage | undefined,
): Promise<WebhookRequest> {
  const { method, url } = request;
  const rawBody =
    method === "GET" || method === "HEAD" ? new Uint8Array(0) : await readRawBody(request, limits, incoming);
  return new ReceivedWebhookRequest(
    method,
    url,
    incoming === undefined ? request.headers : nodeHeaderReader(incoming),
    rawBody,
  );
}

/**
 * The query is parsed on first read: only the GET handshake reads it, and parsing the URL of every POST delivery
 * cost a URL and a URLSearchParams for nothing. A class, not an object literal with `get query()` (see
 * `lint/no-object-literal-accessor.grit` and bench/notes/profiles.md, "Why the code is as it is").
 */
class ReceivedWebhookRequest implements WebhookRequest {
  #query: URLSearchParams | undefined;

  constructor(
    readonly method: string,
    private readonly url: string,
    readonly headers: HeaderReader,
    readonly rawBody: Uint8Array,
  ) {}

  get query(): URLSearchParams {
    this.#query ??= new URL(this.url).searchParams;
    return this.#query;
  }
}

/**
 * One webhook request of a configured channel: the handshake on GET; on POST authenticate, parse, bound
 * each message, commit, and only then 200. 503 only when the inbox cannot store the delivery.
 */
export function handleWebhook(deps: WebhookDeps, request: WebhookRequest): Promise<WebhookResponse> {
  // Dropped from the bench's uninstrumented build (bench/src/base-build.ts), as every `instrumentation:` is.
  instrumentation: {
    const tracer = messagingTracer();
    if (tracer === undefined || request.method !== "POST") break instrumentation;
    return inSpan(
      tracer,
      SPANS.webhook,
      { kind: SpanKinds.SERVER, attributes: { channel: deps.channel.name } },
      async (span) => {
        const response = await handleRequest(deps, request, span);
        span?.setAttribute("http.response.status_code", response.status);
        return response;
      },
    );
  }
  return handleRequest(deps, request, undefined);
}

async function handleRequest(
  deps: WebhookDeps,
  request: WebhookRequest,
  span: TraceSpan | undefined,
): Promise<WebhookResponse> {
  const { channel, store, logger } = deps;
  if (request.method === "GET" && channel.verifyHandshake !== undefined) {
    const result = await channel.verifyHandshake(request.query);
    if (result.ok) return { status: 200, contentType: "text/plain", body: result.challenge };
    return errorResponse(result.status, result.errorCode, result.detail);
  }
  if (request.method !== "POST") {
    return errorResponse(405, "METHOD_NOT_ALLOWED", `${request.method} is not accepted here`);
  }
  if (request.rawBody.byteLength > MAX_WEBHOOK_BODY_BYTES) {
    return errorResponse(413, "PAYLOAD_TOO_LARGE", new PayloadTooLargeError(MAX_WEBHOOK_BODY_BYTES).message);
  }
  if (!(await channel.authenticate(request.headers, request.rawBody))) {
    return errorResponse(403, "FORBIDDEN", "Invalid signature");
  }
  let body: unknown;
  try {
    body = JSON.parse(UTF8.decode(request.rawBody));
  } catch {
    return errorResponse(400, "BAD_REQUEST", "Body is not valid JSON");
  }
  let delivery: ParsedDelivery;
  try {
    delivery = channel.parseDelivery(body);
  } catch (error) {
    if (!(error instanceof InvalidPayloadError)) throw error;
    return errorResponse(400, "BAD_REQUEST", error.message);
  }
  if (delivery.kind === "ignored") return jsonResponse(200, { status: "ignored" });
  if (delivery.kind === "challenge")
    return { status: 200, contentType: "text/plain", body: delivery.challenge };
  const { accepted, rejected } = boundMessages(delivery.messages, delivery.invalid);
  span?.setAttribute("messages", delivery.messages.length + (delivery.invalid?.length ?? 0));
  let counts: InsertCounts;
  try {
    const insert = (traceParent?: string) =>
      store.insert(channel.name, accepted, rejected, (message) => channel.sessionId(message), traceParent);
    counts = await (span === undefined
      ? insert()
      : inSpan(
          messagingTracer(),
          SPANS.insert,
          { attributes: { channel: channel.name, messages: accepted.length + rejected.length } },
          () => insert(traceparentOf(span)),
        ));
    span?.setAttribute("duplicates", counts.duplicates);
  } catch (error) {
    logger.error({ err: error }, "inbox unavailable; delivery refused with 503");
    return errorResponse(503, "SERVICE_UNAVAILABLE", "Inbox unavailable, retry later");
  }
  for (const rejection of rejected) {
    logger.warn({ message_key: rejection.key, reason: rejection.reason }, "inbox message rejected");
  }
  logger.info({ ...counts, statuses: delivery.statuses }, "webhook delivery stored");
  if (counts.received > 0) deps.onStored();
  return jsonResponse(200, { status: "accepted", ...counts });
}
