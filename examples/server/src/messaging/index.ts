// Placeholder until the messaging webhook (issue 6) lands; its engineer owns and replaces this file.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { Sql } from "postgres";
import { z } from "zod";

export const messagingConfigSchema = z.object({});

export interface Messaging {
  routes: OpenAPIHono;
  publicPaths: string[];
  start(): void;
  stop(): Promise<void>;
}

export interface MessagingDeps {
  config: z.output<typeof messagingConfigSchema>;
  sql: Sql;
  logger: Logger;
  production: boolean;
}

export async function createMessaging(_deps: MessagingDeps): Promise<Messaging | null> {
  return null;
}
