import { z } from "zod";
import type { InboundMedia, InboundMessage, InvalidMessage, ParsedDelivery } from "../../channel.js";
import { InvalidPayloadError } from "../../errors.js";
import { stampToMs } from "../../sent-at.js";

const WHATSAPP_OBJECT = "whatsapp_business_account";

/**
 * A user message. The sender is `from` (the phone number) or `from_user_id` (the business-scoped user id,
 * BSUID, which replaces the number of a user who set a username): either may be missing, and both are read.
 */
const messageSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  // Absent, null and "" all mean "not given": the other identifier may still name the sender.
  from: z.string().nullish(),
  from_user_id: z.string().nullish(),
});

/** A delivery's `contacts[]` entry: the phone number (`wa_id`) and the BSUID (`user_id`), each optional. */
const contactSchema = z.looseObject({
  wa_id: z.string().nullish(),
  user_id: z.string().nullish(),
});

/**
 * One change's value; its messages are checked one by one, so one bad message costs only itself. Only what
 * the messages need is strict (the account that replies): contacts and statuses of another shape are
 * passed over, never a reason to refuse the messages beside them.
 */
const valueSchema = z.looseObject({
  metadata: z.looseObject({ phone_number_id: z.string().min(1) }).optional(),
  contacts: z.unknown().optional(),
  messages: z.array(z.unknown()).optional(),
  statuses: z.unknown().optional(),
});

/** A system message (a user changed their number or their user id): recorded, never answered. */
const systemSchema = z.looseObject({
  system: z
    .looseObject({
      body: z.string().optional(),
      wa_id: z.string().nullish(),
      user_id: z.string().nullish(),
    })
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

interface Parsed {
  messages: InboundMessage[];
  invalid: InvalidMessage[];
  statuses: number;
}

/**
 * Every message of every `entry[].changes[].value.messages[]` of a Cloud API delivery. Status callbacks are
 * counted, never turned into messages. `fallbackAccountId` is used when a change carries no metadata.
 *
 * Only a body that is not the delivery envelope (not an object, `entry` not an array) is refused. Below the
 * envelope, whatever fails its schema (an entry, a change's value, a message: a field renamed, retyped or
 * dropped) is returned as `invalid`, named by its path, and the rest of the delivery is still taken.
 */
export function parseWhatsAppDelivery(body: unknown, fallbackAccountId: string): ParsedDelivery {
  if (!isObject(body)) throw new InvalidPayloadError("Body must be a JSON object");
  if (body.object !== WHATSAPP_OBJECT) return { kind: "ignored" };
  const entries = body.entry ?? [];
  if (!Array.isArray(entries)) {
    throw new InvalidPayloadError("Invalid WhatsApp delivery at entry: expected an array");
  }
  const parsed: Parsed = { messages: [], invalid: [], statuses: 0 };
  entries.forEach((entry: unknown, i) => {
    const changes = isObject(entry) ? (entry.changes ?? []) : undefined;
    if (!Array.isArray(changes)) {
      parsed.invalid.push({
        reason: `entry.${i}: expected an object whose changes are an array`,
        raw: entry,
      });
      return;
    }
    changes.forEach((change: unknown, j) => {
      parseChange(change, `entry.${i}.changes.${j}`, fallbackAccountId, parsed);
    });
  });
  return { kind: "events", ...parsed };
}

function parseChange(change: unknown, path: string, fallbackAccountId: string, parsed: Parsed): void {
  if (!isObject(change)) {
    parsed.invalid.push({ reason: `${path}: expected an object`, raw: change });
    return;
  }
  if (change.value === undefined) return;
  const value = valueSchema.safeParse(change.value);
  if (!value.success) {
    parsed.invalid.push({ reason: issueAt(`${path}.value`, value.error), raw: change.value });
    return;
  }
  const { statuses } = value.data;
  parsed.statuses += Array.isArray(statuses) ? statuses.length : 0;
  const accountId = value.data.metadata?.phone_number_id ?? fallbackAccountId;
  const contact = soleContact(value.data.contacts);
  (value.data.messages ?? []).forEach((raw: unknown, k) => {
    const where = `${path}.value.messages.${k}`;
    const message = messageSchema.safeParse(raw);
    if (!message.success) {
      parsed.invalid.push({ ...identity(raw), accountId, reason: issueAt(where, message.error), raw });
      return;
    }
    const inbound = inboundOf(message.data, accountId, contact);
    if (inbound === undefined) {
      parsed.invalid.push({
        ...identity(raw),
        accountId,
        reason: `${where}: no sender (from, from_user_id, or the delivery's one contact)`,
        raw,
      });
      return;
    }
    parsed.messages.push(inbound);
  });
}

function inboundOf(
  message: z.infer<typeof messageSchema>,
  accountId: string,
  contact: string | undefined,
): InboundMessage | undefined {
  // The phone number when there is one: Meta asks businesses to keep sending to numbers they know.
  const sender = given(message.from) ?? given(message.from_user_id) ?? contact;
  const sentAt = stampToMs((message as { timestamp?: unknown }).timestamp);
  const base = {
    id: message.id,
    accountId,
    type: message.type,
    ...(sentAt === undefined ? {} : { sentAt }),
    raw: message,
  };
  if (message.type === "system") {
    const system = systemSchema.safeParse(message);
    const details = system.success ? system.data.system : undefined;
    // A system message may name only the user's new id; it is never answered, so any sender will do.
    const from = sender ?? given(details?.wa_id) ?? given(details?.user_id) ?? "";
    return { ...base, from, text: details?.body ?? "", supported: false, notice: true };
  }
  if (sender === undefined) return undefined;
  const content = contentOf(message);
  return {
    ...base,
    from: sender,
    text: content?.text ?? "",
    ...(content?.media ? { media: content.media } : {}),
    supported: content !== null,
  };
}

/** The sender named by a change's contacts, when it has exactly one (a user message names one contact). */
function soleContact(contacts: unknown): string | undefined {
  if (!Array.isArray(contacts) || contacts.length !== 1) return undefined;
  const contact = contactSchema.safeParse(contacts[0]);
  return contact.success ? (given(contact.data.wa_id) ?? given(contact.data.user_id)) : undefined;
}

/** A string identifier, or undefined for one that is absent, null or empty. */
function given(value: string | null | undefined): string | undefined {
  return value === null || value === "" ? undefined : value;
}

/** The id, sender and type of a message that failed its schema, where they are strings: for the inbox row. */
function identity(raw: unknown): Pick<InvalidMessage, "id" | "from" | "type"> {
  if (!isObject(raw)) return {};
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  return { id: text(raw.id), from: text(raw.from) ?? text(raw.from_user_id), type: text(raw.type) };
}

function issueAt(path: string, error: z.ZodError): string {
  const issue = error.issues[0];
  const at = issue?.path.length ? `${path}.${issue.path.join(".")}` : path;
  return `${at}: ${issue?.message ?? "invalid"}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
