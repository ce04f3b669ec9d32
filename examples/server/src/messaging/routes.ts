import { IncomingMessage } from "node:http";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { Channel } from "./channel.js";
import { InvalidPayloadError, PayloadTooLargeError } from "./errors.js";
import { INBOX_STATUSES, type InboxStore, type InsertCounts } from "./inbox/store.js";
import { boundMessages, MESSAGE_LIMITS } from "./limits.js";
import { readRawBody } from "./raw-body.js";

/** Meta's deliveries are a few KiB; the cap only has to stop abuse. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

const ErrorBody = z.object({
  detail: z.string().openapi({ description: "Error detail message" }),
  error_code: z.string().openapi({ description: "Error code for categorization" }),
});

function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: ErrorBody } } };
}

function channelTag(name: string) {
  return `messaging (${name})`;
}

/** What the routes of a configured channel need. */
export interface WebhookDeps {
  channel: Channel;
  store: InboxStore;
  logger: Logger;
  /** Called after new messages were committed to the inbox. */
  onStored(): void;
}

/**
 * `GET /{name}/status` always; the webhook and the inbox listing only for a configured channel.
 * Only `/{name}/webhook` and `/{name}/status` are public; the inbox listing relies on the server's JWT
 * middleware (scope `config:read`).
 */
export function createMessagingRoutes(name: string, deps: WebhookDeps | null): OpenAPIHono {
  const app = new OpenAPIHono({
    defaultHook: (result, c) => {
      if (!result.success) {
        const issue = result.error.issues[0];
        const detail = issue ? `${issue.path.join(".") || "request"}: ${issue.message}` : "Invalid request";
        return c.json({ detail, error_code: "VALIDATION_ERROR" }, 422);
      }
    },
  });
  const tags = [channelTag(name)];

  app.openapi(
    createRoute({
      method: "get",
      path: `/${name}/status`,
      tags,
      summary: `Whether the ${name} channel is configured`,
      responses: {
        200: {
          description: "Channel status",
          content: {
            "application/json": { schema: z.object({ channel: z.string(), configured: z.boolean() }) },
          },
        },
      },
    }),
    (c) => c.json({ channel: name, configured: deps !== null }, 200),
  );

  if (deps !== null) mountWebhook(app, name, tags, deps);
  return app;
}

/** The Node request @hono/node-server passes as `c.env.incoming`; undefined on other runtimes. */
function nodeRequest(env: unknown): IncomingMessage | undefined {
  if (typeof env !== "object" || env === null || !("incoming" in env)) return undefined;
  return env.incoming instanceof IncomingMessage ? env.incoming : undefined;
}

function mountWebhook(app: OpenAPIHono, name: string, tags: string[], deps: WebhookDeps): void {
  const { channel, store, logger } = deps;

  app.openapi(
    createRoute({
      method: "get",
      path: `/${name}/webhook`,
      tags,
      summary: "Subscription handshake",
      description: "Answers `hub.challenge` when `hub.mode` is `subscribe` and `hub.verify_token` matches.",
      request: {
        query: z.object({
          "hub.mode": z.string().optional(),
          "hub.verify_token": z.string().optional(),
          "hub.challenge": z.string().optional(),
        }),
      },
      responses: {
        200: { description: "The challenge", content: { "text/plain": { schema: z.string() } } },
        400: errorResponse("Missing hub.challenge"),
        403: errorResponse("Wrong mode or verify token"),
        500: errorResponse("No verify token configured"),
      },
    }),
    (c) => {
      const result = channel.verifyHandshake(new URL(c.req.url).searchParams);
      if (result.ok) return c.text(result.challenge, 200);
      return c.json({ detail: result.detail, error_code: result.errorCode }, result.status);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: `/${name}/webhook`,
      tags,
      summary: "Receive messages",
      description:
        "Authenticated by the channel's request signature, not by JWT. Every message of the delivery is " +
        "committed to the inbox (deduplicated by message id) before the 200; a reply is sent later by the " +
        "inbox worker. A message that breaks a per-message limit is recorded as a `rejected` row and not " +
        "answered; the rest of the delivery is stored as usual.",
      request: {
        headers: z.object({
          "x-hub-signature-256": z
            .string()
            .optional()
            .openapi({ description: "sha256=<hex HMAC of the body>" }),
        }),
      },
      responses: {
        200: {
          description: "Stored (or not addressed to this channel)",
          content: {
            "application/json": {
              schema: z.union([
                z.object({
                  status: z.literal("accepted"),
                  received: z.number().int().openapi({ description: "Messages newly stored" }),
                  duplicates: z.number().int().openapi({ description: "Messages already in the inbox" }),
                  rejected: z
                    .number()
                    .int()
                    .optional()
                    .openapi({
                      description:
                        "Present when messages broke a per-message limit: those newly recorded as `rejected` " +
                        `rows (depth ${MESSAGE_LIMITS.maxDepth}, ids ${MESSAGE_LIMITS.maxKeyLength} characters, ` +
                        `strings ${MESSAGE_LIMITS.maxStringLength} characters, ${MESSAGE_LIMITS.maxMessageBytes} bytes)`,
                    }),
                }),
                z.object({ status: z.literal("ignored") }),
              ]),
            },
          },
        },
        400: errorResponse("Body is not valid JSON or not a valid delivery"),
        403: errorResponse("Missing, malformed or wrong signature"),
        413: errorResponse(`Body larger than ${MAX_WEBHOOK_BODY_BYTES} bytes`),
        503: errorResponse("Inbox unavailable: nothing was stored, the sender should retry"),
      },
    }),
    async (c) => {
      let raw: Uint8Array;
      try {
        raw = await readRawBody(c.req.raw, MAX_WEBHOOK_BODY_BYTES, nodeRequest(c.env));
      } catch (error) {
        if (!(error instanceof PayloadTooLargeError)) throw error;
        return c.json({ detail: error.message, error_code: "PAYLOAD_TOO_LARGE" }, 413);
      }
      if (!channel.authenticate(c.req.raw.headers, raw)) {
        return c.json({ detail: "Invalid signature", error_code: "FORBIDDEN" }, 403);
      }
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
      } catch {
        return c.json({ detail: "Body is not valid JSON", error_code: "BAD_REQUEST" }, 400);
      }
      let delivery: ReturnType<Channel["parseDelivery"]>;
      try {
        delivery = channel.parseDelivery(body);
      } catch (error) {
        if (!(error instanceof InvalidPayloadError)) throw error;
        return c.json({ detail: error.message, error_code: "BAD_REQUEST" }, 400);
      }
      if (delivery.kind === "ignored") return c.json({ status: "ignored" as const }, 200);
      const { accepted, rejected } = boundMessages(delivery.messages);
      let counts: InsertCounts;
      try {
        counts = await store.insert(channel.name, accepted, rejected);
      } catch (error) {
        logger.error({ err: error }, "inbox unavailable; delivery refused with 503");
        return c.json({ detail: "Inbox unavailable, retry later", error_code: "SERVICE_UNAVAILABLE" }, 503);
      }
      for (const rejection of rejected) {
        logger.warn({ message_key: rejection.key, reason: rejection.reason }, "inbox message rejected");
      }
      logger.info({ ...counts, statuses: delivery.statuses }, "webhook delivery stored");
      if (counts.received > 0) deps.onStored();
      return c.json({ status: "accepted" as const, ...counts }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: `/${name}/inbox`,
      tags,
      summary: "Inbox rows, newest first",
      description:
        "Requires scope `config:read`. Failed rows keep their last error; rejected rows (a message that broke a " +
        "per-message limit) carry the reason in `last_error`.",
      // The scheme the server registers (src/http/routes/databases.ts), named here to avoid an import cycle.
      security: [{ HTTPBearer: [] }],
      request: {
        query: z.object({
          status: z.enum(INBOX_STATUSES).optional(),
          limit: z.coerce.number().int().min(1).max(1000).default(100),
        }),
      },
      responses: {
        200: {
          description: "Inbox rows",
          content: {
            "application/json": {
              schema: z.object({
                items: z.array(
                  z.object({
                    channel: z.string(),
                    message_id: z.string(),
                    account_id: z.string(),
                    from: z.string(),
                    type: z.string(),
                    status: z.enum(INBOX_STATUSES),
                    attempts: z.number().int(),
                    last_error: z.string().nullable(),
                    received_at: z.string().openapi({ format: "date-time" }),
                    updated_at: z.string().openapi({ format: "date-time" }),
                  }),
                ),
              }),
            },
          },
        },
        401: errorResponse("Missing or invalid bearer token"),
        403: errorResponse("Token without scope config:read"),
        422: errorResponse("Unknown status or bad limit"),
        503: errorResponse("Inbox unavailable"),
      },
    }),
    async (c) => {
      const { status, limit } = c.req.valid("query");
      try {
        const rows = await store.list(channel.name, status, limit);
        const items = rows.map((row) => ({
          ...row,
          received_at: row.received_at.toISOString(),
          updated_at: row.updated_at.toISOString(),
        }));
        return c.json({ items }, 200);
      } catch (error) {
        logger.error({ err: error }, "inbox listing failed");
        return c.json({ detail: "Inbox unavailable, retry later", error_code: "SERVICE_UNAVAILABLE" }, 503);
      }
    },
  );
}
