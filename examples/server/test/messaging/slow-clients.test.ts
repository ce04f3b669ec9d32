import { readFile } from "node:fs/promises";
import { type RawClient, rawClient, statusOf } from "@agent-platform/test-support/raw-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_DATABASE_URL } from "../databases.js";
import { type ChildServer, spawnServer } from "./support/child-server.js";
import { type GraphStub, startGraphStub } from "./support/graph-stub.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./support/whatsapp.js";

/**
 * Anonymous clients that stall or dribble, on raw sockets against the server as an operator runs it (a child
 * process): the memory their bodies can pin is bounded in total, their connections are closed at the deadlines,
 * and a delivery that arrives meanwhile is still stored. REQUEST_TIMEOUT_MS is shortened to keep the file quick;
 * the README gives the bounds measured with the defaults. On real PostgreSQL when TEST_DATABASE_URL is set: the
 * embedded database's WebAssembly memory (about half a GiB resident) would dwarf what is measured here.
 */

const REQUEST_TIMEOUT_MS = 3_000;
// Node looks for late requests every second, and a refused connection lingers up to 2 s for its answer.
const CLOSE_SLACK_MS = 3_500;
const MIB = 1024 * 1024;
const ATTACKERS = 120;

/** The server process's resident memory, from the kernel: no debug endpoint in the server. */
async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kib) * 1024;
}

function head(fields: Record<string, string>): string {
  const lines = Object.entries({ host: "127.0.0.1", "content-type": "application/json", ...fields });
  return `POST /whatsapp/webhook HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
}

describe.skipIf(process.platform !== "linux")("clients that dribble or stall (server child process)", () => {
  let graph: GraphStub;
  let server: ChildServer;
  let port: number;
  let dropDatabase: (() => Promise<void>) | undefined;
  const clients: RawClient[] = [];

  beforeAll(async () => {
    graph = await startGraphStub();
    const database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    dropDatabase = database?.drop;
    server = await spawnServer(
      channelEnv(graph.url, {
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        MESSAGING_WORKER_START_DELAY_MS: "3600000",
        ...(database === undefined ? {} : { DATABASE_URL: database.url }),
      }),
    );
    port = Number(new URL(server.url).port);
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.destroy();
  });
  afterAll(async () => {
    await server?.kill("SIGKILL");
    await graph?.close();
    await dropDatabase?.();
  });

  async function open(fields: Record<string, string>): Promise<RawClient> {
    const client = await rawClient(port);
    clients.push(client);
    client.write(head(fields));
    return client;
  }

  it(`bounds what ${ATTACKERS} stalled 1 MiB bodies hold, closes them at the deadline, and still stores a delivery`, async () => {
    const pid = server.child.pid as number;
    // Warm: the first delivery loads the code paths a delivery uses.
    const warm = await postDelivery(server.url, delivery([textMessage("wamid.warm", "15550000001", "warm")]));
    expect(warm.status).toBe(200);
    const baseline = await rssBytes(pid);

    let peak = baseline;
    const sampler = setInterval(() => {
      void rssBytes(pid).then(
        (rss) => {
          peak = Math.max(peak, rss);
        },
        () => undefined,
      );
    }, 50);
    try {
      const attackers = await Promise.all(
        Array.from({ length: ATTACKERS }, async () => {
          const client = await open({ "content-length": String(MIB) });
          client.write(Buffer.alloc(MIB - 64, 0x78));
          return client;
        }),
      );
      // While they hold their sockets, a real delivery is answered.
      const legit = await postDelivery(
        server.url,
        delivery([textMessage("wamid.during", "15550000002", "during the flood")]),
      );
      expect(legit.status).toBe(200);
      expect(await legit.json()).toMatchObject({ status: "accepted", received: 1 });

      const closedAfter = await Promise.all(attackers.map((client) => client.closed));
      const statuses = attackers.map((client) => statusOf(client.received()));
      const refused = statuses.filter((status) => status === 503).length;
      const late = statuses.filter((status) => status === 408).length;
      // A refused client still sending when its connection closes can get a reset that discards the 503.
      const reset = statuses.filter((status) => status === undefined).length;
      console.info(
        `${ATTACKERS} stalled 1 MiB bodies: ${refused} refused 503, ${reset} reset, ${late} answered 408; RSS ${(baseline / MIB).toFixed(1)} MiB before, peak ${(peak / MIB).toFixed(1)} MiB (+${((peak - baseline) / MIB).toFixed(1)}); last closed after ${Math.max(...closedAfter).toFixed(0)} ms`,
      );
      // The large bodies' share of the 32 MiB budget holds 24 of them; the rest are refused before being read.
      expect(late).toBeLessThanOrEqual(24);
      expect(refused + reset + late).toBe(ATTACKERS);
      expect(refused).toBeGreaterThan(reset);
      expect(Math.max(...closedAfter)).toBeLessThan(REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS);
      // Unbounded, the bodies alone would be 120 MiB (measured +129 MiB). Embedded PGlite's WebAssembly memory
      // (about half a GiB, partly released meanwhile) hides it: checked on PostgreSQL only.
      if (TEST_DATABASE_URL === undefined)
        console.warn("TEST_DATABASE_URL is not set: the memory bound is not checked");
      else expect(peak - baseline).toBeLessThan(64 * MIB);
    } finally {
      clearInterval(sampler);
    }
  });

  it("closes each shape of slow client by its deadline: stalled, dribbled, a 2 GB chunk announced, slow headers", async () => {
    const shapes = {
      "stalled Content-Length": async () => {
        const client = await open({ "content-length": "1000" });
        client.write("0123456789");
        return client;
      },
      "1 byte/s dribble": async () => {
        const client = await open({ "content-length": "1000" });
        client.dribble("x".repeat(1000), 1_000);
        return client;
      },
      "2 GB chunk announced": async () => {
        const client = await open({ "transfer-encoding": "chunked" });
        client.write("80000000\r\n0123456789");
        return client;
      },
      "2 GB chunk dribbled": async () => {
        const client = await open({ "transfer-encoding": "chunked" });
        client.write("80000000\r\n");
        client.dribble("x".repeat(1000), 200);
        return client;
      },
      "headers sent slowly": async () => {
        const client = await rawClient(port);
        clients.push(client);
        client.write("POST /whatsapp/webhook HTTP/1.1\r\nhost: 127.0.0.1\r\n");
        client.dribble(`x-slow: ${"y".repeat(1000)}\r\n`, 200);
        return client;
      },
    };
    const results = await Promise.all(
      Object.entries(shapes).map(async ([name, start]) => {
        const client = await start();
        const closedAfter = await client.closed;
        return { name, status: statusOf(client.received()), closedAfter };
      }),
    );
    for (const { name, status, closedAfter } of results) {
      expect({ name, status }).toEqual({ name, status: 408 });
      expect({ name, late: closedAfter > REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS }).toEqual({
        name,
        late: false,
      });
      expect({ name, early: closedAfter < REQUEST_TIMEOUT_MS - 100 }).toEqual({ name, early: false });
    }
    // The server still serves.
    const after = await postDelivery(
      server.url,
      delivery([textMessage("wamid.after", "15550000003", "after")]),
    );
    expect(after.status).toBe(200);
  });
});
