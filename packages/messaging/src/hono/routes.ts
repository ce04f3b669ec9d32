import { IncomingMessage } from "node:http";
import { BEARER_SCHEME, ErrorBody, jsonResponse, validationHook } from "@agent-platform/common/hono";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { ChannelRoute } from "../channel.js";
import { CHANNEL_ROUTES } from "../channels/routes.js";
import {
  INBOX_ERASE_SCOPE,
  INBOX_SCOPE,
  INBOX_STATUSES,
  INBOX_WRITE_SCOPE,
  type InboxEntry,
  InboxMessageNotFoundError,
  InboxStatusConflictError,
  MAX_WEBHOOK_BODY_BYTES,
  MESSAGE_LIMITS,
  type Messaging,
} from "../index.js";

// The platform's one error body, so the routes mounted into an app document the app's own error shape.
function errorResponse(description: string) {
  return jsonResponse(ErrorBody, description);
}

function channelTag(name: string) {
  return `messaging (${name})`;
}

/** Options of `messagingRoutes`. */
export interface MessagingRoutesOptions {
  /** Channels that get a status route, configured or not. Default: every channel the package ships. */
  channels?: readonly ChannelRoute[];
  /** Name of the bearer security scheme the app registers, for the inbox listing in OpenAPI. Default `BEARER_SCHEME`. */
  securityScheme?: string;
}

/**
 * The messaging routes for a Hono app (OpenAPI-described): `GET /{name}/status` for every channel, and
 * for a configured one its webhook and `GET /{name}/inbox`. Mount with `app.route("/", routes)`. The
 * webhook and status paths authenticate themselves; the inbox listing relies on the app's JWT middleware
 * (scope `config:read`; see `messagingRoutePolicy`).
 */
export function messagingRoutes(messaging: Messaging, options: MessagingRoutesOptions = {}): OpenAPIHono {
  // The platform's one 422 hook: the same detail, with the same bound on echoed input, as the app's own routes.
  const app = new OpenAPIHono({ defaultHook: validationHook });
  const security = options.securityScheme ?? BEARER_SCHEME;
  for (const route of options.channels ?? CHANNEL_ROUTES) {
    const configured = messaging.channels.includes(route.name);
    mountStatus(app, route.name, configured);
    if (configured) {
      mountWebhook(app, route, security, messaging);
      mountInboxOperations(app, route.name, security, messaging);
    }
  }
  return app;
}

function mountStatus(app: OpenAPIHono, name: string, configured: boolean): void {
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
    (c) => c.json({ channel: name, configured }, 200),
  );
}

/** The Node request @hono/node-server passes as `c.env.incoming`; undefined on other runtimes. */
function nodeRequest(env: unknown): IncomingMessage | undefined {
  if (typeof env !== "object" || env === null || !("incoming" in env)) return undefined;
  return env.incoming instanceof IncomingMessage ? env.incoming : undefined;
}

function mountWebhook(app: OpenAPIHono, route: ChannelRoute, security: string, messaging: Messaging): void {
  const { name, webhookPath } = route;
  const tags = [channelTag(name)];
  const webhook: WebhookHandler = (c) => messaging.fetch(name, c.req.raw, { incoming: nodeRequest(c.env) });

  if (route.handshake === "query") mountQueryHandshake(app, route, webhook);
  const challenge =
    route.handshake === "body"
      ? { "text/plain": { schema: z.string().openapi({ description: "The challenge of a handshake" }) } }
      : {};

  app.openapi(
    createRoute({
      method: "post",
      path: webhookPath,
      tags,
      summary: "Receive messages",
      description:
        "Authenticated by the channel's request signature, not by JWT. Every message of the delivery is " +
        "committed to the inbox (deduplicated by message id) before the 200; a reply is sent later by the " +
        "inbox worker. A message that breaks a per-message limit is recorded as a `rejected` row and not " +
        "answered; the rest of the delivery is stored as usual.",
      // Documented as plain parameters rather than a `request.headers` schema, which would validate every
      // delivery's headers with zod only to let the channel check them (bench/notes/profiles.md).
      parameters: Object.entries(route.authHeaders).map(([header, description]) => ({
        schema: { type: "string", description },
        required: false,
        description,
        name: header,
        in: "header",
      })),
      responses: {
        200: {
          description: "Stored (or not addressed to this channel)",
          content: {
            ...challenge,
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
        403: errorResponse("Missing, malformed, stale or wrong signature or secret token"),
        408: errorResponse("The body did not arrive in time (the whole-body deadline or the idle limit)"),
        413: errorResponse(`Body larger than ${MAX_WEBHOOK_BODY_BYTES} bytes`),
        503: errorResponse(
          "Inbox unavailable, or the bodies being received hold the whole body budget: nothing was stored, the sender should retry",
        ),
      },
    }),
    (c) => webhook(c) as never,
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
      security: [{ [security]: [] }],
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
              schema: z.object({ items: z.array(entrySchema) }),
            },
          },
        },
        401: errorResponse("Missing or invalid bearer token"),
        403: errorResponse(`Token without scope ${INBOX_SCOPE}`),
        422: errorResponse("Unknown status or bad limit"),
        503: errorResponse("Inbox unavailable"),
      },
    }),
    async (c) => {
      const { status, limit } = c.req.valid("query");
      try {
        const rows = await messaging.inbox.list(name, { status, limit });
        return c.json({ items: rows.map(entryJson) }, 200);
      } catch {
        // Logged by messaging.inbox; the caller may retry.
        return c.json(unavailable, 503);
      }
    },
  );
}

const entrySchema = z.object({
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
});

/** An entry as JSON: its times as ISO strings. */
function entryJson(row: InboxEntry) {
  return { ...row, received_at: row.received_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

const unavailable = { detail: "Inbox unavailable, retry later", error_code: "SERVICE_UNAVAILABLE" } as const;

/** Ids are the chat products' (WhatsApp's `wamid.…`, Slack's `Ev…`, Telegram's `<bot>:<update>`), bounded as stored. */
const messageIdParam = z
  .string()
  .min(1)
  .max(MESSAGE_LIMITS.maxKeyLength)
  .openapi({ param: { name: "message_id", in: "path" }, description: "The chat product's message id" });

/** The operator's routes beside the listing: counts, retries of failed messages, erasure of a conversation. */
function mountInboxOperations(app: OpenAPIHono, name: string, security: string, messaging: Messaging): void {
  const tags = [channelTag(name)];
  const counts = z.object(
    Object.fromEntries(INBOX_STATUSES.map((status) => [status, z.number().int()])) as Record<
      (typeof INBOX_STATUSES)[number],
      z.ZodNumber
    >,
  );

  app.openapi(
    createRoute({
      method: "get",
      path: `/${name}/inbox/stats`,
      tags,
      summary: "Inbox rows by status, and the oldest pending one",
      description: `Requires scope \`${INBOX_SCOPE}\`. \`oldest_pending_ms\` and \`oldest_pending_at\` are null when nothing is pending.`,
      security: [{ [security]: [] }],
      responses: {
        200: {
          description: "Counts",
          content: {
            "application/json": {
              schema: z.object({
                channel: z.string(),
                counts,
                oldest_pending_ms: z.number().int().nullable(),
                oldest_pending_at: z.string().openapi({ format: "date-time" }).nullable(),
              }),
            },
          },
        },
        401: errorResponse("Missing or invalid bearer token"),
        403: errorResponse(`Token without scope ${INBOX_SCOPE}`),
        503: errorResponse("Inbox unavailable"),
      },
    }),
    async (c) => {
      try {
        const stats = await messaging.inbox.stats(name);
        return c.json({ ...stats, oldest_pending_at: stats.oldest_pending_at?.toISOString() ?? null }, 200);
      } catch {
        return c.json(unavailable, 503);
      }
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: `/${name}/inbox/retry`,
      tags,
      summary: "Retry failed messages, oldest first",
      description:
        `Requires scope \`${INBOX_WRITE_SCOPE}\`. Puts up to \`limit\` failed rows back to \`pending\` ` +
        "with their attempts reset; reply parts already sent are not sent again.",
      security: [{ [security]: [] }],
      request: {
        query: z.object({
          status: z.literal("failed"),
          limit: z.coerce.number().int().min(1).max(1000).default(100),
        }),
      },
      responses: {
        200: {
          description: "The rows put back",
          content: {
            "application/json": {
              schema: z.object({ retried: z.number().int(), message_ids: z.array(z.string()) }),
            },
          },
        },
        401: errorResponse("Missing or invalid bearer token"),
        403: errorResponse(`Token without scope ${INBOX_WRITE_SCOPE}`),
        422: errorResponse("status is not `failed`, or a bad limit"),
        503: errorResponse("Inbox unavailable"),
      },
    }),
    async (c) => {
      const { limit } = c.req.valid("query");
      try {
        return c.json(await messaging.inbox.retry(name, { status: "failed", limit }), 200);
      } catch {
        return c.json(unavailable, 503);
      }
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: `/${name}/inbox/{message_id}/retry`,
      tags,
      summary: "Retry one failed message",
      description:
        `Requires scope \`${INBOX_WRITE_SCOPE}\`. The row goes back to \`pending\` with its attempts reset; ` +
        "reply parts already sent are not sent again.",
      security: [{ [security]: [] }],
      request: { params: z.object({ message_id: messageIdParam }) },
      responses: {
        200: {
          description: "The row, now pending",
          content: { "application/json": { schema: entrySchema } },
        },
        401: errorResponse("Missing or invalid bearer token"),
        403: errorResponse(`Token without scope ${INBOX_WRITE_SCOPE}`),
        404: errorResponse("No such message in this inbox"),
        409: errorResponse("The message is not `failed`"),
        422: errorResponse("Bad message id"),
        503: errorResponse("Inbox unavailable"),
      },
    }),
    async (c) => {
      const { message_id: messageId } = c.req.valid("param");
      try {
        return c.json(entryJson(await messaging.inbox.retry(name, messageId)), 200);
      } catch (error) {
        if (error instanceof InboxMessageNotFoundError) {
          return c.json({ detail: "No such message in this inbox", error_code: error.code }, 404);
        }
        if (error instanceof InboxStatusConflictError) {
          return c.json(
            {
              detail: `The message is ${error.status}; only a failed message can be retried`,
              error_code: error.code,
            },
            409,
          );
        }
        return c.json(unavailable, 503);
      }
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: `/${name}/inbox`,
      tags,
      summary: "Erase one conversation",
      description:
        `Requires scope \`${INBOX_ERASE_SCOPE}\`. Deletes every row of the conversation (its text, its reply), whatever ` +
        "its status; a message being answered is not answered further. `session_id` is the id the agent gets, " +
        `e.g. \`${name}:…\`.`,
      security: [{ [security]: [] }],
      request: {
        query: z.object({ session_id: z.string().min(1).max(SESSION_ID_MAX_LENGTH) }),
      },
      responses: {
        200: {
          description: "Rows deleted",
          content: { "application/json": { schema: z.object({ deleted: z.number().int() }) } },
        },
        401: errorResponse("Missing or invalid bearer token"),
        403: errorResponse(`Token without scope ${INBOX_ERASE_SCOPE}`),
        422: errorResponse("Missing or bad session_id"),
        503: errorResponse("Inbox unavailable"),
      },
    }),
    async (c) => {
      const { session_id: sessionId } = c.req.valid("query");
      try {
        return c.json({ deleted: await messaging.inbox.erase(name, sessionId) }, 200);
      } catch {
        return c.json(unavailable, 503);
      }
    },
  );
}

/** A session id is `<channel>:` and up to three ids the chat product bounds (see MESSAGE_LIMITS.maxKeyLength). */
const SESSION_ID_MAX_LENGTH = 4 * MESSAGE_LIMITS.maxKeyLength;

type WebhookHandler = (c: { req: { raw: Request }; env: unknown }) => Promise<Response>;

function mountQueryHandshake(app: OpenAPIHono, route: ChannelRoute, webhook: WebhookHandler): void {
  app.openapi(
    createRoute({
      method: "get",
      path: route.webhookPath,
      tags: [channelTag(route.name)],
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
    // The handshake answers text or an error body; the OpenAPI types cannot see through a Fetch Response.
    (c) => webhook(c) as never,
  );
}
