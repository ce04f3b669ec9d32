import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import pino from "pino";
import postgres from "postgres";
import { createMessaging, messagingConfigSchema } from "../../../src/messaging/index.js";
import type { TestDatabase } from "./database.js";

/** A row of GET /whatsapp/inbox. */
export interface InboxItem {
  channel: string;
  message_id: string;
  from: string;
  type: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

export interface RunningServer {
  url: string;
  /** GET /whatsapp/inbox?status=, failing on anything but 200. */
  inbox(status?: string): Promise<InboxItem[]>;
  stop(): Promise<void>;
}

/** The messaging routes and worker on a real HTTP server (random port) over `database`. */
export async function startMessagingServer(
  database: TestDatabase,
  env: Record<string, string>,
): Promise<RunningServer> {
  const sql = postgres(database.url, { max: database.kind === "pglite" ? 1 : 5, onnotice: () => {} });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const messaging = await createMessaging({
    config: messagingConfigSchema.parse(env),
    sql,
    logger,
    production: false,
  });
  const app = new Hono();
  app.route("/", messaging.routes);
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  messaging.start();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async inbox(status) {
      const response = await fetch(`${url}/whatsapp/inbox${status ? `?status=${status}` : ""}`);
      if (response.status !== 200)
        throw new Error(`inbox listing: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { items: InboxItem[] }).items;
    },
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await messaging.stop();
      await sql.end({ timeout: 5 });
    },
  };
}
