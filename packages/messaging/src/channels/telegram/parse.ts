import { z } from "zod";
import type { InboundMessage, ParsedDelivery } from "../../channel.js";
import { InvalidPayloadError } from "../../errors.js";
import { stamped } from "../../sent-at.js";

const updateSchema = z.looseObject({
  update_id: z.number().int().nonnegative(),
  message: z
    .looseObject({
      chat: z.looseObject({ id: z.union([z.number().int(), z.string()]) }),
      from: z
        .looseObject({ id: z.union([z.number().int(), z.string()]), is_bot: z.boolean().optional() })
        .optional(),
      text: z.string().optional(),
      caption: z.string().optional(),
    })
    .optional(),
});

/**
 * One Bot API update. A `message` with text (or a caption) becomes one message keyed by `<bot>:<update_id>`,
 * so a redelivered update is stored once per bot. Other updates (edits, callbacks, members, ...), messages
 * without text and messages from bots are acknowledged and ignored.
 *
 * Only a body that is not a JSON object is refused: an update that fails its schema (a field renamed,
 * retyped or dropped) is returned as `invalid`, to be stored as rejected, and acknowledged, so Telegram
 * neither retries it nor holds back the updates queued behind it.
 */
export function parseTelegramUpdate(body: unknown, botId: string): ParsedDelivery {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidPayloadError("Body must be a JSON object");
  }
  const parsed = updateSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const updateId = (body as { update_id?: unknown }).update_id;
    return {
      kind: "events",
      messages: [],
      invalid: [
        {
          id: Number.isSafeInteger(updateId) ? `${botId}:${updateId}` : undefined,
          accountId: botId,
          reason: `Telegram update at ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
          raw: body,
        },
      ],
      statuses: 0,
    };
  }
  const { update_id: updateId, message } = parsed.data;
  const text = message?.text ?? message?.caption;
  if (message === undefined || text === undefined || message.from?.is_bot === true)
    return { kind: "ignored" };
  const chat = String(message.chat.id);
  const inbound: InboundMessage = {
    id: `${botId}:${updateId}`,
    accountId: botId,
    from: message.from === undefined ? chat : String(message.from.id),
    conversation: chat,
    type: message.text === undefined ? "caption" : "text",
    text,
    supported: true,
    ...stamped((message as { date?: unknown }).date),
    raw: message,
  };
  return { kind: "events", messages: [inbound], statuses: 0 };
}
