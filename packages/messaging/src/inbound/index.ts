/**
 * `@agent-platform/messaging/inbound`: what happens to a chat product's webhook request before it is
 * stored, without Node built-ins, PostgreSQL or an HTTP framework, so it runs on Node, Bun, Deno and
 * Workers alike. Authentication is on WebCrypto, constant-time; parsing turns a delivery into the
 * messages the inbox stores. The channels of the package's root entry call these same functions.
 */
export type {
  HandshakeResult,
  HeaderReader,
  InboundMedia,
  InboundMessage,
  InvalidMessage,
  ParsedDelivery,
} from "../channel.js";
export { parseSlackDelivery } from "../channels/slack/parse.js";
export { isValidSlackSignature, SLACK_MAX_CLOCK_SKEW_SECONDS } from "../channels/slack/signature.js";
export { parseTelegramUpdate } from "../channels/telegram/parse.js";
export { isValidTelegramSecretToken } from "../channels/telegram/secret-token.js";
export { verifyWhatsAppHandshake } from "../channels/whatsapp/handshake.js";
export { parseWhatsAppDelivery } from "../channels/whatsapp/parse.js";
export { isValidWhatsAppSignature } from "../channels/whatsapp/signature.js";
export { InvalidPayloadError, MessagingError } from "../errors.js";
