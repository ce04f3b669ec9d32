import { z } from "zod";
import type { InboundMessage, ParsedDelivery } from "../../channel.js";
import { InvalidPayloadError } from "../../errors.js";

const envelopeSchema = z.looseObject({ type: z.string() });
const challengeSchema = z.looseObject({ challenge: z.string().min(1) });
const callbackSchema = z.looseObject({
  event_id: z.string().min(1),
  team_id: z.string().min(1),
  event: z.looseObject({
    type: z.string(),
    subtype: z.string().optional(),
    bot_id: z.string().optional(),
    user: z.string().optional(),
    text: z.string().optional(),
    ts: z.string().optional(),
    thread_ts: z.string().optional(),
    channel: z.string().optional(),
    channel_type: z.string().optional(),
  }),
});

function invalid(error: z.ZodError): InvalidPayloadError {
  const issue = error.issues[0];
  return new InvalidPayloadError(
    `Invalid Slack request at ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
  );
}

/**
 * A request of Slack's Events API: `url_verification` is the handshake; an `event_callback` carrying a
 * direct `message` or an `app_mention` is one message keyed by `event_id` (the same event retried, or
 * delivered to another replica, is stored once). Everything else is acknowledged and ignored, and so are
 * messages from bots (the app's own replies included), edits and deletions: the bot never answers itself.
 */
export function parseSlackDelivery(body: unknown): ParsedDelivery {
  const envelope = envelopeSchema.safeParse(body);
  if (!envelope.success) throw invalid(envelope.error);
  if (envelope.data.type === "url_verification") {
    const parsed = challengeSchema.safeParse(body);
    if (!parsed.success) throw invalid(parsed.error);
    return { kind: "challenge", challenge: parsed.data.challenge };
  }
  if (envelope.data.type !== "event_callback") return { kind: "ignored" };
  const parsed = callbackSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error);
  const { event, event_id: eventId, team_id: teamId } = parsed.data;
  const direct = event.type === "message" && event.channel_type === "im";
  const mention = event.type === "app_mention";
  // Any subtype (bot_message, message_changed, message_deleted, ...) is not a person writing to the app.
  const fromPerson = event.subtype === undefined && event.bot_id === undefined && event.user !== undefined;
  if (!(direct || mention) || !fromPerson || event.channel === undefined || event.ts === undefined) {
    return { kind: "ignored" };
  }
  // In a channel the reply opens (or continues) a thread on the mention; in a DM it stays in the DM's
  // flow unless the person wrote in a thread.
  const thread = event.thread_ts ?? (mention ? event.ts : undefined);
  const message: InboundMessage = {
    id: eventId,
    accountId: teamId,
    from: event.user ?? "",
    conversation: event.channel,
    ...(thread === undefined ? {} : { thread }),
    type: event.type,
    text: event.text ?? "",
    supported: true,
    raw: event,
  };
  return { kind: "events", messages: [message], statuses: 0 };
}
