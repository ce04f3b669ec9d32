import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processCpuUs, type ServerProcess, ServerUnavailableError, startServerProcess } from "./load.js";
import { sig } from "./stats.js";
import type { GroupResult, Target } from "./types.js";
import { benchDatabase, delivery, referenceServerEnv } from "./webhook.js";

const SERVER_SCRIPT = join(import.meta.dirname, "servers", "reference-server.ts");
const PROCESS_COUNTS = [1, 2, 4] as const;
/** Concurrent webhook clients of the load generator, spread over the server processes. */
const CLIENTS = 32;
/** Messages each server process handles at once (MESSAGING_WORKER_CONCURRENCY; the server's default is 4). */
const WORKER_CONCURRENCY = 16;

/**
 * A local HTTP server standing in for a chat product's API (replies) or an agent runtime: it records when each
 * message id arrived and answers as the real one would. The echo agent replies with the message's text, which the
 * bench sets to the message id, so each reply names its message.
 */
interface StandIn {
  url: string;
  /** Arrival times (performance.now()) per message id, one entry per request. */
  arrivals: Map<string, number[]>;
  close(): Promise<void>;
}

async function startStandIn(kind: "chat-api" | "agent"): Promise<StandIn> {
  const arrivals = new Map<string, number[]>();
  const server: Server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        text?: string | { body?: string };
      };
      const id = typeof body.text === "string" ? body.text : (body.text?.body ?? "");
      arrivals.set(id, [...(arrivals.get(id) ?? []), at]);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(kind === "agent" ? JSON.stringify({ text: id }) : '{"messages":[{"id":"wamid.reply"}]}');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

interface Signer {
  post(origin: string, messageId: string): Promise<number>;
}

function signer(appSecret: string): Signer {
  return {
    async post(origin, messageId) {
      const body = delivery(messageId);
      const signature = createHmac("sha256", appSecret).update(body).digest("hex");
      try {
        const response = await fetch(`${origin}/whatsapp/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${signature}` },
          body,
        });
        await response.arrayBuffer();
        return response.status;
      } catch {
        return 0;
      }
    },
  };
}

async function startServers(
  count: number,
  env: (index: number) => Record<string, string>,
  dataDirs: string[],
): Promise<ServerProcess[]> {
  const servers: ServerProcess[] = [];
  try {
    for (let index = 0; index < count; index++) {
      const dataDir = mkdtempSync(join(tmpdir(), "bench-inbox-"));
      dataDirs.push(dataDir);
      servers.push(
        await startServerProcess(SERVER_SCRIPT, [], { ...env(index), PLATFORM_DATA_DIR: dataDir }),
      );
    }
    return servers;
  } catch (error) {
    await Promise.all(servers.map((server) => server.stop()));
    throw error;
  }
}

interface EndToEnd {
  processes: number;
  messages: number;
  messagesPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  answeredOnce: number;
  answeredTwiceOrMore: number;
  unanswered: number;
  acksNot200: number;
  serverCpuUsPerMessage: number;
  benchCpuUsPerMessage: number;
  seconds: number;
}

/** N messages through `processes` servers on one fresh database, every reply awaited at the stand-in. */
async function endToEnd(
  url: string,
  processes: number,
  messages: number,
  timeoutMs: number,
  dataDirs: string[],
): Promise<EndToEnd> {
  const database = await benchDatabase(url, `bench_inbox_${processes}p`);
  const chatApi = await startStandIn("chat-api");
  const appSecret = randomBytes(24).toString("hex");
  let servers: ServerProcess[] = [];
  try {
    servers = await startServers(
      processes,
      () =>
        referenceServerEnv(database.url, "", appSecret, {
          WHATSAPP_API_BASE_URL: chatApi.url,
          MESSAGING_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
        }),
      dataDirs,
    );
    const origins = servers.map((server) => `http://127.0.0.1:${server.port}`);
    const { post } = signer(appSecret);
    const runId = randomBytes(4).toString("hex");
    const ids = Array.from({ length: messages }, (_, i) => `wamid.e2e.${runId}.${i}`);
    const sentAt = new Map<string, number>();
    let acksNot200 = 0;
    const cpuBefore = servers.map((server) => processCpuUs(server.pid) ?? 0);
    const benchCpuBefore = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < ids.length) {
          const index = next++;
          const id = ids[index] as string;
          sentAt.set(id, performance.now());
          if ((await post(origins[index % origins.length] as string, id)) !== 200) acksNot200++;
        }
      }),
    );
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline && ids.some((id) => !chatApi.arrivals.has(id))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const lastReply = Math.max(...[...chatApi.arrivals.values()].flat());
    // Late duplicates would show up here: give the workers a moment more before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const serverCpu = servers.reduce(
      (sum, server, index) => sum + ((processCpuUs(server.pid) ?? 0) - (cpuBefore[index] ?? 0)),
      0,
    );
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const latencies = ids
      .map((id) => (chatApi.arrivals.get(id)?.[0] ?? Number.NaN) - (sentAt.get(id) ?? Number.NaN))
      .filter((latency) => Number.isFinite(latency))
      .sort((a, b) => a - b);
    const replies = ids.map((id) => chatApi.arrivals.get(id)?.length ?? 0);
    const seconds = (lastReply - started) / 1000;
    return {
      processes,
      messages,
      messagesPerSecond: replies.filter((n) => n > 0).length / seconds,
      latencyP50Ms: percentile(latencies, 0.5),
      latencyP99Ms: percentile(latencies, 0.99),
      answeredOnce: replies.filter((n) => n === 1).length,
      answeredTwiceOrMore: replies.filter((n) => n > 1).length,
      unanswered: replies.filter((n) => n === 0).length,
      acksNot200,
      serverCpuUsPerMessage: serverCpu / messages,
      benchCpuUsPerMessage: (benchCpu.user + benchCpu.system) / messages,
      seconds,
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await chatApi.close();
    await database.drop();
  }
}

interface IdleLatency {
  path: string;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * Idle webhook-to-claim: one delivery at a time with pauses between, on two processes sharing the database. The
 * agent is an HTTP stand-in because the worker calls it right after the claim (nothing is written in between),
 * so the time from sending the webhook to the agent call is the webhook-to-claim latency plus one loopback
 * request. Deliveries to process A (whose worker never starts) can only be claimed by process B, woken by
 * NOTIFY; deliveries to B wake its own worker in-process.
 */
async function idleLatency(url: string, samples: number, dataDirs: string[]): Promise<IdleLatency[]> {
  const database = await benchDatabase(url, "bench_inbox_idle");
  const chatApi = await startStandIn("chat-api");
  const agent = await startStandIn("agent");
  const appSecret = randomBytes(24).toString("hex");
  let servers: ServerProcess[] = [];
  try {
    servers = await startServers(
      2,
      (index) =>
        referenceServerEnv(database.url, "", appSecret, {
          WHATSAPP_API_BASE_URL: chatApi.url,
          AGENT_URL: agent.url,
          ...(index === 0 ? { MESSAGING_WORKER_START_DELAY_MS: "86400000" } : {}),
        }),
      dataDirs,
    );
    const [a, b] = servers.map((server) => `http://127.0.0.1:${server.port}`) as [string, string];
    const { post } = signer(appSecret);
    const runId = randomBytes(4).toString("hex");
    const measured: Record<string, number[]> = { notify: [], local: [] };
    for (let i = 0; i < samples * 2; i++) {
      const path = i % 2 === 0 ? "notify" : "local";
      const id = `wamid.idle.${runId}.${i}`;
      const sent = performance.now();
      if ((await post(path === "notify" ? a : b, id)) !== 200) continue;
      const deadline = performance.now() + 5_000;
      while (!chatApi.arrivals.has(id) && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const called = agent.arrivals.get(id)?.[0];
      if (called !== undefined) measured[path]?.push(called - sent);
      // Idle again: nothing in flight when the next delivery comes.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return Object.entries(measured).map(([path, values]) => {
      const sorted = [...values].sort((x, y) => x - y);
      return {
        path:
          path === "notify"
            ? "stored by process A, claimed by process B (LISTEN/NOTIFY)"
            : "stored and claimed by the same process (in-process wake-up)",
        samples: sorted.length,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        maxMs: sorted[sorted.length - 1] ?? Number.NaN,
      };
    });
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await Promise.all([chatApi.close(), agent.close()]);
    await database.drop();
  }
}

export async function runInboxGroup(options: { quick: boolean }): Promise<GroupResult> {
  const base = {
    id: "inbox",
    title:
      "5. Inbox end to end: webhook → inbox → echo agent → reply (1, 2, 4 server processes, real PostgreSQL)",
    method: [],
    tables: [],
    charts: [],
    targets: [],
  };
  const url = process.env.TEST_DATABASE_URL;
  if (!url)
    return { ...base, skipped: "TEST_DATABASE_URL is not set (a real PostgreSQL is needed)", figures: {} };
  const messages = options.quick ? 200 : 2_000;
  const idleSamples = options.quick ? 5 : 40;
  const dataDirs: string[] = [];
  try {
    const runs: EndToEnd[] = [];
    for (const processes of PROCESS_COUNTS) {
      console.log(`inbox: ${messages} messages through ${processes} server process(es)`);
      runs.push(await endToEnd(url, processes, messages, options.quick ? 30_000 : 120_000, dataDirs));
    }
    console.log(`inbox: idle webhook-to-claim latency, ${idleSamples} samples per path`);
    const idle = await idleLatency(url, idleSamples, dataDirs);

    const notify = idle.find((row) => row.path.includes("NOTIFY"));
    const targets: Target[] = [
      {
        name: "End to end: every message answered exactly once",
        goal: `all ${messages} at 1, 2 and 4 processes`,
        measured: runs
          .map(
            (run) =>
              `${run.processes}p: ${run.answeredOnce} once, ${run.answeredTwiceOrMore} more, ${run.unanswered} none`,
          )
          .join("; "),
        met: runs.every((run) => run.answeredOnce === messages),
      },
      {
        name: "Idle webhook-to-claim latency (other process, NOTIFY)",
        goal: "p50 < 10 ms",
        measured: notify
          ? `p50 ${sig(notify.p50Ms)} ms, p99 ${sig(notify.p99Ms)} ms (${notify.samples} samples)`
          : "n/a",
        met: notify ? notify.p50Ms < 10 : null,
      },
    ];
    return {
      ...base,
      method: [
        `For 1, 2 and 4 reference-server processes (\`examples/server\`) on one fresh database of the real PostgreSQL: ${messages} signed WhatsApp deliveries of one text message each, sent by ${CLIENTS} concurrent clients of the bench process round-robin over the processes. Each process runs its webhook (group commit) and its worker (\`MESSAGING_WORKER_CONCURRENCY=${WORKER_CONCURRENCY}\`, LISTEN/NOTIFY on, the built-in echo agent); the worker sends every reply to a chat-API stand-in (a node:http server in the bench process) that records when each message's reply arrives.`,
        "msgs/s: messages answered divided by the time from the first webhook sent to the last reply received. Latency: from sending a message's webhook to its reply arriving at the stand-in. Exactly once: the stand-in counts the replies per message id, half a second after the last one.",
        "CPU: the server processes' CPU (from /proc) and the bench process's (load generator and stand-in) per message. PostgreSQL's own backends are not counted; on 2 cores, what is left of 2 s of CPU per second goes to them and to everything else running on the machine.",
        `Idle webhook-to-claim: ${idleSamples} deliveries per path, one at a time with 50 ms of idle in between, to two processes sharing a database; an HTTP agent stand-in marks the claim (the worker calls the agent right after claiming, with nothing written in between), so each figure is the webhook-to-claim latency plus one loopback request.`,
      ],
      tables: [
        {
          title: "End to end, webhook → inbox → echo agent → reply",
          columns: [
            "server processes",
            "msgs/s",
            "p50 ms",
            "p99 ms",
            "answered exactly once",
            "acks not 200",
            "server CPU µs/msg",
            "bench CPU µs/msg",
          ],
          rows: runs.map((run) => [
            String(run.processes),
            sig(run.messagesPerSecond),
            sig(run.latencyP50Ms),
            sig(run.latencyP99Ms),
            `${run.answeredOnce} / ${run.messages}`,
            String(run.acksNot200),
            sig(run.serverCpuUsPerMessage),
            sig(run.benchCpuUsPerMessage),
          ]),
        },
        {
          title: "Idle webhook-to-claim latency (plus one loopback request to the agent)",
          columns: ["path", "samples", "p50 ms", "p99 ms", "max ms"],
          rows: idle.map((row) => [
            row.path,
            String(row.samples),
            sig(row.p50Ms),
            sig(row.p99Ms),
            sig(row.maxMs),
          ]),
        },
      ],
      charts: [
        {
          title: "End to end throughput by server processes, msgs/s",
          unit: "messages answered per second",
          higherIsBetter: true,
          sections: [
            {
              name: "one PostgreSQL, 2 cores",
              bars: runs.map((run) => ({
                label: `${run.processes} process${run.processes === 1 ? "" : "es"}`,
                kind: "ours" as const,
                value: run.messagesPerSecond,
              })),
            },
          ],
        },
      ],
      targets,
      figures: { endToEnd: runs, idle },
    };
  } catch (error) {
    if (error instanceof ServerUnavailableError) return { ...base, skipped: error.message, figures: {} };
    throw error;
  } finally {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}
