import {
  type PrivatePostgres,
  privatePostgresUnavailable,
  startPrivatePostgres,
} from "@agent-platform/test-support/private-postgres";
import { type ChildServer, spawnServer } from "../messaging/support/child-server.js";
import { type GraphStub, startGraphStub } from "../messaging/support/graph-stub.js";
import { channelEnv } from "../messaging/support/whatsapp.js";

/** Why the database fault tests cannot run here (said once, visibly), or undefined. */
export const FAULTS_UNAVAILABLE = privatePostgresUnavailable();
if (FAULTS_UNAVAILABLE !== undefined) console.warn(`database fault tests skipped: ${FAULTS_UNAVAILABLE}`);

/** A private PostgreSQL, a stand-in Graph API, and server processes whose inbox is that cluster's `inbox`. */
export interface InboxCluster {
  pg: PrivatePostgres;
  servers: ChildServer[];
  close(): Promise<void>;
}

/**
 * Starts `count` server processes on a fresh private cluster's database `inbox`, connecting as the superuser or,
 * with `role`, as a login role of that name that owns the database (so the test can limit its connections).
 */
export async function startInboxCluster(options: { count: number; role?: string }): Promise<InboxCluster> {
  const pg = await startPrivatePostgres();
  const { role } = options;
  await pg.admin(async (sql) => {
    if (role !== undefined) await sql`CREATE ROLE ${sql(role)} LOGIN`;
    await sql`CREATE DATABASE inbox ${role === undefined ? sql`` : sql`OWNER ${sql(role)}`}`;
  });
  let graph: GraphStub | undefined;
  const servers: ChildServer[] = [];
  const close = async () => {
    await Promise.all(servers.map((server) => server.kill("SIGKILL")));
    await graph?.close();
    await pg.destroy();
  };
  try {
    graph = await startGraphStub();
    const env = { DATABASE_URL: pg.urlOf("inbox", role), ...channelEnv(graph.url) };
    for (const started of await Promise.allSettled(
      Array.from({ length: options.count }, () => spawnServer(env)),
    )) {
      if (started.status === "rejected") throw started.reason;
      servers.push(started.value);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { pg, servers, close };
}
