import { z } from "zod";
import type { InboundMessage, ParsedDelivery } from "../../channel.js";
import { InvalidPayloadError } from "../../errors.js";
import { stamped } from "../../sent-at.js";

const envelopeSchema = z.looseObject({ type: z.string() });
const challengeSchema = z.looseObject({ challenge: z.string().min(1) });
/** Event types the app answers; other events (whose fields differ: `team_join`'s `user` is an object) are ignored. */
const ANSWERED_EVENTS = new Set(["message", "app_mention"]);
const eventTypeSchema = z.looseObject({ event: z.looseObject({ type: z.string() }) });
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
  return new InvalidPayloadError(`Invalid Slack request at ${issueOf(error)}`);
}

function issueOf(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`;
}

/**
 * A request of Slack's Events API: `url_verification` is the handshake; an `event_callback` carrying a
 * direct `message` or an `app_mention` is one message keyed by `event_id` (the same event retried, or
 * delivered to another replica, is stored once). Everything else is acknowledged and ignored, and so are
 * messages from bots (the app's own replies included), edits and deletions: the bot never answers itself.
 *
 * Only a body without a string `type` (and a handshake without its challenge) is refused: an
 * `event_callback` that fails its schema (a field renamed, retyped or dropped) is returned as `invalid`,
 * to be stored as rejected, and acknowledged, so Slack does not retry it and then drop it.
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
  const eventType = eventTypeSchema.safeParse(body);
  if (eventType.success && !ANSWERED_EVENTS.has(eventType.data.event.type)) return { kind: "ignored" };
  const parsed = callbackSchema.safeParse(body);
  if (!parsed.success) {
    const { event_id: id, team_id: team, event } = envelope.data;
    const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
    const fields = typeof event === "object" && event !== null ? (event as Record<string, unknown>) : {};
    return {
      kind: "events",
      messages: [],
      invalid: [
        {
          id: text(id),
          accountId: text(team),
          from: text(fields.user),
          type: text(fields.type),
          reason: `Slack event_callback at ${issueOf(parsed.error)}`,
          raw: body,
        },
      ],
      statuses: 0,
    };
  }
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
    ...stamped(event.ts),
    raw: event,
  };
  return { kind: "events", messages: [message], statuses: 0 };
}
