// The platform's shared configuration error and logger shape, so a user of this package needs no other import.
export {
  ConfigError,
  isConfigError,
  type Logger,
  type LoggerOption,
  type LogMethod,
} from "@agent-platform/common";
export type { AgentHandler, AgentMessage } from "./agents/agent.js";
export { echoAgent } from "./agents/echo.js";
export { createHttpAgent } from "./agents/http.js";
export type {
  CallOptions,
  Channel,
  ChannelRoute,
  HandshakeResult,
  HeaderReader,
  InboundMedia,
  InboundMessage,
  InvalidMessage,
  OutboundReply,
  ParsedDelivery,
} from "./channel.js";
export { type SlackOptions, slack } from "./channels/slack/index.js";
export { type TelegramOptions, telegram } from "./channels/telegram/index.js";
export { type WhatsAppOptions, whatsapp } from "./channels/whatsapp/index.js";
export {
  MESSAGE_PROCESSED_CHANNEL,
  type MessageProcessedEvent,
  OUTBOUND_REQUEST_CHANNEL,
  type OutboundRequestEvent,
} from "./diagnostics.js";
export {
  BodiesBusyError,
  BodyTimeoutError,
  DeliveryError,
  InboxBusyError,
  InboxCommitTimeoutError,
  InboxMessageNotFoundError,
  InboxStatusConflictError,
  InvalidPayloadError,
  MessagingError,
  PayloadTooLargeError,
} from "./errors.js";
export {
  INBOX_STATUSES,
  type InboxEntry,
  type InboxStats,
  type InboxStatus,
  type InboxStoreCheck,
  type InsertCounts,
} from "./inbox/store.js";
export { MAX_ANSWER_BYTES, MESSAGE_LIMITS, type RejectedMessage } from "./limits.js";
export {
  type BodyOptions,
  type CommitOptions,
  createMessaging,
  type InboxRetried,
  type Messaging,
  type MessagingInbox,
  type MessagingOptions,
  type RetentionOptions,
  WORKER_ORDERINGS,
  type WorkerOptions,
  type WorkerOrdering,
} from "./messaging.js";
export { ENVIRONMENTS, type Environment } from "./options.js";
export {
  type PacingOptions,
  type SendPacing,
  SLACK_PACING,
  TELEGRAM_PACING,
  WHATSAPP_PACING,
} from "./pacing.js";
export {
  INBOX_ERASE_SCOPE,
  INBOX_SCOPE,
  INBOX_WRITE_SCOPE,
  type MessagingRoutePolicy,
  messagingRoutePolicy,
} from "./routes.js";
export { MAX_WEBHOOK_BODY_BYTES, type WebhookRequest, type WebhookResponse } from "./webhook.js";
