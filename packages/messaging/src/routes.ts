import type { ChannelRoute } from "./channel.js";
import { CHANNEL_ROUTES } from "./channels/routes.js";

/** The scope that lets a token read a channel's inbox (its rows and counts). */
export const INBOX_SCOPE = "config:read";
/** The scope that lets a token change a channel's inbox (retry failed messages). */
export const INBOX_WRITE_SCOPE = "config:write";
/** The scope that lets a token erase a conversation from a channel's inbox. */
export const INBOX_ERASE_SCOPE = "config:delete";

/** What an auth middleware needs to know about the messaging routes; one source for the server's JWT setup. */
export interface MessagingRoutePolicy {
  /** Paths that authenticate themselves (webhooks by signature) or are public (status): exclude from JWT. */
  excludedPaths: string[];
  /** `"METHOD /path"` → required scopes, for every other messaging route. */
  scopeMappings: Record<string, string[]>;
}

/** The routes the messaging package serves for `channels` (default: every channel it ships). */
export function messagingRoutePolicy(
  channels: readonly ChannelRoute[] = CHANNEL_ROUTES,
): MessagingRoutePolicy {
  return {
    excludedPaths: channels.flatMap((channel) => [channel.webhookPath, `/${channel.name}/status`]),
    scopeMappings: Object.fromEntries(
      channels.flatMap((channel) => [
        [`GET /${channel.name}/inbox`, [INBOX_SCOPE]],
        [`GET /${channel.name}/inbox/stats`, [INBOX_SCOPE]],
        [`POST /${channel.name}/inbox/retry`, [INBOX_WRITE_SCOPE]],
        [`POST /${channel.name}/inbox/*/retry`, [INBOX_WRITE_SCOPE]],
        [`DELETE /${channel.name}/inbox`, [INBOX_ERASE_SCOPE]],
      ]),
    ),
  };
}
