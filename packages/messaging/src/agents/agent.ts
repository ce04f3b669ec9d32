import type { CallOptions, InboundMedia } from "../channel.js";

/** What an agent handler gets for one inbound chat message. */
export interface AgentMessage {
  channel: string;
  from: string;
  text: string;
  type: string;
  media?: InboundMedia;
  /** Stable per sender, e.g. `whatsapp:<phone number id>:<sender>`. */
  sessionId: string;
  /** The message as the chat product sent it. */
  raw: unknown;
}

/**
 * Answers one message; null means "no reply". Throws DeliveryError("AGENT_FAILED") to say whether the
 * inbox should try again later. `timeoutMs`, when set, is the longest one call may take: `createMessaging`
 * refuses a worker lease that does not outlast it (`createHttpAgent` sets it; set it on an agent of yours).
 * `options.signal` aborts when the worker stops at its deadline: give the call up then (the message stays
 * leased and is answered after a restart).
 */
export type AgentHandler = ((
  message: AgentMessage,
  options?: CallOptions,
) => Promise<{ text: string } | null>) & {
  readonly timeoutMs?: number | undefined;
};
