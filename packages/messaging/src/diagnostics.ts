import { channel } from "node:diagnostics_channel";

/**
 * The figures the inbox publishes for metrics, on Node's `diagnostics_channel`, so an app turns them into the
 * metrics library of its choice without this package depending on one. Publishing costs nothing while nobody
 * subscribes.
 */

/** The `diagnostics_channel` name of `OutboundRequestEvent`s. */
export const OUTBOUND_REQUEST_CHANNEL = "agent-platform:messaging:outbound-request";
/** The `diagnostics_channel` name of `MessageProcessedEvent`s. */
export const MESSAGE_PROCESSED_CHANNEL = "agent-platform:messaging:message-processed";

/** One outbound request finished: to the agent or a chat product's API. */
export interface OutboundRequestEvent {
  /** `agent`, `whatsapp`, `slack` or `telegram`. */
  readonly target: "agent" | "whatsapp" | "slack" | "telegram";
  /** The answer's HTTP status; null when none came (unreachable, timed out, refused before sending). */
  readonly statusCode: number | null;
  readonly durationMs: number;
}

/** A worker finished with an inbox message for now: answered, to be retried, or failed for good. */
export interface MessageProcessedEvent {
  readonly channel: string;
  readonly messageId: string;
  readonly outcome: "done" | "retry" | "failed";
}

const outbound = channel(OUTBOUND_REQUEST_CHANNEL);
const processed = channel(MESSAGE_PROCESSED_CHANNEL);

/** What `postJson` is told the API is called, as the target label. */
const TARGETS: Readonly<Record<string, OutboundRequestEvent["target"]>> = {
  Agent: "agent",
  "Graph API": "whatsapp",
  "Slack API": "slack",
  "Telegram Bot API": "telegram",
};

/** A timer for one outbound request to `api`; undefined (nothing measured) while nobody subscribes. */
export function outboundTimer(api: string): ((statusCode: number | null) => void) | undefined {
  const target = TARGETS[api];
  if (!outbound.hasSubscribers || target === undefined) return undefined;
  const started = performance.now();
  return (statusCode) => {
    const event: OutboundRequestEvent = { target, statusCode, durationMs: performance.now() - started };
    outbound.publish(event);
  };
}

export function publishProcessed(event: MessageProcessedEvent): void {
  if (processed.hasSubscribers) processed.publish(event);
}
