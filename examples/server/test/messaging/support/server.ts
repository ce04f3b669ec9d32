import type { Sql } from "postgres";
import type { Backend } from "../../databases.js";
import { signToken, startTestServer } from "../../helpers.js";

/** A row of GET /{channel}/inbox. */
export interface InboxItem {
  channel: string;
  message_id: string;
  from: string;
  type: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

export interface MessagingTestServer {
  url: string;
  /** JSON log lines the server wrote. */
  logs: string[];
  /** GET /{channel}/inbox?status= with a token of scope config:read; fails on anything but 200. */
  inbox(status?: string, channel?: string): Promise<InboxItem[]>;
  /** Message ids in the inbox table, read directly from the inbox database. */
  inboxIds(): Promise<string[]>;
  /** Name of the inbox database (a fresh one per server on PostgreSQL). */
  databaseName(): Promise<string>;
  stop(): Promise<void>;
}

/** The reference server in-process on a random port (PGlite or a fresh PostgreSQL database), channel env added. */
export async function startMessagingServer(
  backend: Backend,
  env: Record<string, string>,
): Promise<MessagingTestServer> {
  const server = await startTestServer({ backend, env });
  const token = await signToken(["config:read"]);
  const sql: Sql = server.sql();
  return {
    url: server.url,
    logs: server.logs,
    async inbox(status, channel = "whatsapp") {
      const response = await fetch(`${server.url}/${channel}/inbox${status ? `?status=${status}` : ""}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (response.status !== 200)
        throw new Error(`inbox listing: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { items: InboxItem[] }).items;
    },
    async inboxIds() {
      const rows = await sql<{ message_id: string }[]>`SELECT message_id FROM messaging.inbox ORDER BY 1`;
      return rows.map((row) => row.message_id);
    },
    async databaseName() {
      const [row] = await sql<{ name: string }[]>`SELECT current_database() AS name`;
      return row?.name ?? "";
    },
    stop: () => server.cleanup(),
  };
}
