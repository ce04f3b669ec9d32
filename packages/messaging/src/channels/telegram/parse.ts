import { z } from "zod";
import type { InboundMessage, ParsedDelivery } from "../../channel.js";
import { InvalidPayloadError } from "../../errors.js";

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
 */
export function parseTelegramUpdate(body: unknown, botId: string): ParsedDelivery {
  const parsed = updateSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidPayloadError(
      `Invalid Telegram update at ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
    );
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
    raw: message,
  };
  return { kind: "events", messages: [inbound], statuses: 0 };
}
