import type { InboundMessage } from "../../src/channel.js";

/**
 * A supported text message as a channel would parse it, keyed and worded by `id`: what the inbox tests store.
 * `fields` changes what one test needs otherwise (its account, its sender, its text).
 */
export function textMessage(id: string, fields: Partial<InboundMessage> = {}): InboundMessage {
  return {
    id,
    accountId: "acc",
    from: "491",
    type: "text",
    text: id,
    supported: true,
    raw: { id },
    ...fields,
  };
}
