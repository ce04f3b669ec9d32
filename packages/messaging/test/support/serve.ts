import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { messagingRoutes } from "../../src/hono/index.js";
import { createMessaging, type Messaging, type MessagingOptions } from "../../src/messaging.js";

/** createMessaging's routes served by @hono/node-server on a random local port, as an application serves them. */
export interface ServedMessaging {
  messaging: Messaging;
  url: string;
  close(): Promise<void>;
}

export async function serveMessaging(options: MessagingOptions): Promise<ServedMessaging> {
  const messaging = await createMessaging(options);
  const app = messagingRoutes(messaging);
  const server: ServerType = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await once(server, "listening");
  messaging.start();
  return {
    messaging,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((resolve) => {
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolve());
      });
      await messaging.stop();
    },
  };
}
