import type { ChannelRoute } from "./channel.js";
import { CHANNEL_ROUTES } from "./channels/routes.js";

/** The scope that lets a token list a channel's inbox. */
export const INBOX_SCOPE = "config:read";

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
      channels.map((channel) => [`GET /${channel.name}/inbox`, [INBOX_SCOPE]]),
    ),
  };
}
