/** Where a channel is mounted: `/{name}/status`, `/{name}/inbox` and its webhook path. */
export interface ChannelRoute {
  name: string;
  webhookPath: string;
}

export const WHATSAPP_ROUTE: ChannelRoute = { name: "whatsapp", webhookPath: "/whatsapp/webhook" };

/** Every channel this package ships, configured or not: each has a status route saying which. */
export const CHANNEL_ROUTES: readonly ChannelRoute[] = [WHATSAPP_ROUTE];
