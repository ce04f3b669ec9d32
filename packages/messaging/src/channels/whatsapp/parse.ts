import { z } from "zod";
import type { InboundMedia, InboundMessage, ParsedDelivery } from "../../channel.js";
import { InvalidPayloadError } from "../../errors.js";

const WHATSAPP_OBJECT = "whatsapp_business_account";

const messageSchema = z.looseObject({
  id: z.string().min(1),
  from: z.string().min(1),
  type: z.string().min(1),
});

const deliverySchema = z.looseObject({
  object: z.string(),
  entry: z
    .array(
      z.looseObject({
        changes: z
          .array(
            z.looseObject({
              value: z
                .looseObject({
                  metadata: z.looseObject({ phone_number_id: z.string().min(1) }).optional(),
                  messages: z.array(messageSchema).optional(),
                  statuses: z.array(z.unknown()).optional(),
                })
                .optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
});

const mediaSchema = z.looseObject({
  id: z.string().min(1),
  mime_type: z.string().optional(),
  caption: z.string().optional(),
  filename: z.string().optional(),
});

const contentSchemas = {
  text: z.looseObject({ text: z.looseObject({ body: z.string() }) }),
  image: z.looseObject({ image: mediaSchema }),
  video: z.looseObject({ video: mediaSchema }),
  document: z.looseObject({ document: mediaSchema }),
  audio: z.looseObject({ audio: mediaSchema }),
  interactive: z.looseObject({
    interactive: z.union([
      z.looseObject({ type: z.literal("button_reply"), button_reply: z.looseObject({ title: z.string() }) }),
      z.looseObject({ type: z.literal("list_reply"), list_reply: z.looseObject({ title: z.string() }) }),
    ]),
  }),
};

type Content = { text: string; media?: InboundMedia };

/**
 * Every message of every `entry[].changes[].value.messages[]` of a Cloud API delivery. Status callbacks are
 * counted, never turned into messages. `fallbackAccountId` is used when a change carries no metadata.
 */
export function parseWhatsAppDelivery(body: unknown, fallbackAccountId: string): ParsedDelivery {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidPayloadError("Body must be a JSON object");
  }
  if ((body as { object?: unknown }).object !== WHATSAPP_OBJECT) return { kind: "ignored" };
  const parsed = deliverySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidPayloadError(
      `Invalid WhatsApp delivery at ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
    );
  }
  const messages: InboundMessage[] = [];
  let statuses = 0;
  for (const entry of parsed.data.entry ?? []) {
    for (const change of entry.changes ?? []) {
      const value = change.value;
      if (!value) continue;
      statuses += value.statuses?.length ?? 0;
      const accountId = value.metadata?.phone_number_id ?? fallbackAccountId;
      for (const message of value.messages ?? []) {
        const content = contentOf(message);
        messages.push({
          id: message.id,
          accountId,
          from: message.from,
          type: message.type,
          text: content?.text ?? "",
          ...(content?.media ? { media: content.media } : {}),
          supported: content !== null,
          raw: message,
        });
      }
    }
  }
  return { kind: "events", messages, statuses };
}

/** The text (and media) an agent gets from a message, or null for a type that is not supported. */
function contentOf(message: z.infer<typeof messageSchema>): Content | null {
  switch (message.type) {
    case "text": {
      const parsed = contentSchemas.text.safeParse(message);
      return parsed.success ? { text: parsed.data.text.body } : null;
    }
    case "image":
    case "video":
    case "document":
    case "audio": {
      const parsed = contentSchemas[message.type].safeParse(message);
      if (!parsed.success) return null;
      const media = (parsed.data as Record<string, z.infer<typeof mediaSchema>>)[message.type];
      if (!media) return null;
      return {
        text: media.caption ?? "",
        media: {
          id: media.id,
          ...(media.mime_type === undefined ? {} : { mimeType: media.mime_type }),
          ...(media.filename === undefined ? {} : { filename: media.filename }),
        },
      };
    }
    case "interactive": {
      const parsed = contentSchemas.interactive.safeParse(message);
      if (!parsed.success) return null;
      const interactive = parsed.data.interactive;
      return {
        text:
          interactive.type === "button_reply" ? interactive.button_reply.title : interactive.list_reply.title,
      };
    }
    default:
      return null;
  }
}
