import {
  inSpan,
  SpanKinds,
  type SpanOptions,
  type Tracer,
  type TraceSpan,
  traceContextOf,
  tracerFor,
} from "@agent-platform/common/internal";

/** The tracer of this package, when an OpenTelemetry SDK is registered (see the README's "Tracing"). */
export const messagingTracer: () => Tracer | undefined = tracerFor("@agent-platform/messaging");

export const SPANS = {
  webhook: "messaging webhook",
  insert: "messaging inbox.insert",
  agentCall: "messaging agent.call",
  channelSend: "messaging channel.send",
} as const;

/**
 * A worker's span for one message: linked (a span link, not a parent: the worker runs later, maybe in another
 * process) to the webhook span whose traceparent the row stored, with the message id as an attribute.
 */
export function inMessageSpan<T>(
  name: string,
  message: { readonly channel: string; readonly messageId: string; readonly traceParent: string | null },
  fn: (span: TraceSpan | undefined) => Promise<T>,
): Promise<T> {
  const tracer = messagingTracer();
  if (tracer === undefined) return fn(undefined);
  const delivered = traceContextOf(message.traceParent);
  const options: SpanOptions = {
    kind: SpanKinds.CLIENT,
    attributes: {
      channel: message.channel,
      message_id: message.messageId,
      "messaging.message.id": message.messageId,
    },
    ...(delivered === undefined ? {} : { links: [{ context: delivered }] }),
  };
  return inSpan(tracer, name, options, fn);
}
