import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_DATABASE_URL } from "../databases.js";
import { type ChildServer, spawnServer } from "./support/child-server.js";
import { type GraphStub, startGraphStub, waitFor } from "./support/graph-stub.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./support/whatsapp.js";

const MESSAGES = 200;
const PER_DELIVERY = 5;

describe.skipIf(!TEST_DATABASE_URL)("two server processes on one PostgreSQL", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it(`answer each of ${MESSAGES} messages exactly once, also when Meta delivers to both`, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const graph: GraphStub = await startGraphStub();
    cleanups.push(() => graph.close());
    const env = { DATABASE_URL: database.url, ...channelEnv(graph.url) };
    const servers: ChildServer[] = await Promise.all([spawnServer(env), spawnServer(env)]);
    for (const server of servers) cleanups.push(() => server.kill("SIGTERM"));

    const started = Date.now();
    const deliveries = Array.from({ length: MESSAGES / PER_DELIVERY }, (_, d) =>
      delivery(
        Array.from({ length: PER_DELIVERY }, (_, m) => {
          const i = d * PER_DELIVERY + m;
          return textMessage(`wamid.load.${i}`, `1666${String(i).padStart(6, "0")}`, `message ${i}`);
        }),
      ),
    );
    // Every delivery goes to one process, and every third one is redelivered to the other as well.
    const results = await Promise.all(
      deliveries.flatMap((payload, d) => {
        const target = servers[d % 2] as ChildServer;
        const other = servers[(d + 1) % 2] as ChildServer;
        const posts = [postDelivery(target.url, payload)];
        if (d % 3 === 0) posts.push(postDelivery(other.url, payload));
        return posts.map(
          async (post) => (await post).json() as Promise<{ received: number; duplicates: number }>,
        );
      }),
    );
    const received = results.reduce((sum, result) => sum + result.received, 0);
    const duplicates = results.reduce((sum, result) => sum + result.duplicates, 0);
    expect(received).toBe(MESSAGES);
    expect(duplicates).toBe(Math.ceil(deliveries.length / 3) * PER_DELIVERY);

    await waitFor(`${MESSAGES} replies`, () => graph.accepted().length >= MESSAGES, 60_000);
    const elapsed = Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const replies = graph.requests.map((r) => `${r.body.to}:${r.body.text?.body}`);
    expect(replies).toHaveLength(MESSAGES);
    expect(new Set(replies).size).toBe(MESSAGES);
    for (let i = 0; i < MESSAGES; i++)
      expect(replies).toContain(`1666${String(i).padStart(6, "0")}:message ${i}`);
    console.info(`two processes answered ${MESSAGES} messages in ${elapsed} ms`);
  });
});
