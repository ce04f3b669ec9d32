import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { type LoadResult, runLoad, ServerUnavailableError, startServerProcess } from "./load.js";
import { median, sig } from "./stats.js";
import type { GroupResult, Target } from "./types.js";

const SERVER_SCRIPT = join(import.meta.dirname, "servers", "reference-server.ts");
const CONNECTIONS = 10;
const PHONE_NUMBER_ID = "100000000000001";

/** One WhatsApp Cloud API delivery carrying one text message with the given id. */
function delivery(messageId: string): string {
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "200000000000002",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "15550000000", phone_number_id: PHONE_NUMBER_ID },
              contacts: [{ profile: { name: "Bench" }, wa_id: "15551230000" }],
              messages: [
                {
                  from: "15551230000",
                  id: messageId,
                  timestamp: String(Math.floor(Date.now() / 1000)),
                  type: "text",
                  text: { body: "hello from the benchmark" },
                },
              ],
            },
          },
        ],
      },
    ],
  });
}

/**
 * The database's own ceiling for this workload: ${CONNECTIONS} clients each committing one single-row
 * INSERT ... ON CONFLICT DO NOTHING after another (autocommit, a durable commit each), straight through
 * postgres.js — no HTTP, no signature, no JSON. What an acknowledgement that waits for its own commit can at most reach.
 */
async function commitFloor(
  databaseUrl: string,
  durationSeconds: number,
): Promise<{ requestsPerSecond: number; latencyP50Ms: number; latencyP99Ms: number }> {
  const sql = postgres(databaseUrl, { max: CONNECTIONS, onnotice: () => {} });
  try {
    await sql`CREATE TABLE IF NOT EXISTS bench_commit_floor (id text PRIMARY KEY, body jsonb NOT NULL)`;
    const body = delivery("wamid.floor");
    const latencies: number[] = [];
    const end = performance.now() + durationSeconds * 1000;
    let sequence = 0;
    const client = async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await sql`INSERT INTO bench_commit_floor (id, body) VALUES (${`floor.${sequence++}`}, ${body}::jsonb) ON CONFLICT DO NOTHING`;
        latencies.push(performance.now() - start);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: CONNECTIONS }, client));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
    return { requestsPerSecond: latencies.length / seconds, latencyP50Ms: at(0.5), latencyP99Ms: at(0.99) };
  } finally {
    await sql.end();
  }
}

function median2(rounds: LoadResult[], pick: (r: LoadResult) => number): number {
  return median(rounds.map(pick));
}

export async function runWebhookGroup(options: { quick: boolean }): Promise<GroupResult> {
  const base = {
    id: "webhook",
    title: "4. Webhook acknowledgement (reference server, real PostgreSQL)",
    method: [],
    tables: [],
    charts: [],
    targets: [],
  };
  const url = process.env.TEST_DATABASE_URL;
  if (!url)
    return { ...base, skipped: "TEST_DATABASE_URL is not set (a real PostgreSQL is needed)", figures: {} };
  const rounds = options.quick ? 1 : 3;
  const durationSeconds = options.quick ? 1 : 1.5;
  const warmupSeconds = options.quick ? 0 : 0.5;

  // A database of its own: the inbox lives in a fixed schema, which tests running meanwhile may also use.
  const database = `bench_webhook_${process.pid}_${randomBytes(3).toString("hex")}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${database}"`);
  const databaseUrl = new URL(url);
  databaseUrl.pathname = `/${database}`;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-webhook-"));
  const appSecret = randomBytes(24).toString("hex");
  let server: Awaited<ReturnType<typeof startServerProcess>> | undefined;
  try {
    try {
      server = await startServerProcess(SERVER_SCRIPT, [], {
        DATABASE_URL: databaseUrl.href,
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: "warn",
        PLATFORM_ENV: "development",
        PLATFORM_DATA_DIR: dataDir,
        WHATSAPP_APP_SECRET: appSecret,
        WHATSAPP_VERIFY_TOKEN: "bench-verify-token",
        WHATSAPP_ACCESS_TOKEN: "bench-access-token",
        WHATSAPP_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
        // Nothing listens here, and nothing is sent: the worker starts only after the run (see below).
        WHATSAPP_API_BASE_URL: "http://127.0.0.1:9",
        MESSAGING_WORKER_START_DELAY_MS: "86400000",
      });
    } catch (error) {
      if (error instanceof ServerUnavailableError) return { ...base, skipped: error.message, figures: {} };
      throw error;
    }
    const origin = `http://127.0.0.1:${server.port}`;
    const runId = randomBytes(4).toString("hex");
    let sequence = 0;
    const signed = () => {
      const body = delivery(`wamid.bench.${runId}.${sequence++}`);
      const signature = createHmac("sha256", appSecret).update(body).digest("hex");
      return {
        headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${signature}` },
        body,
      };
    };
    const cases = {
      webhook: () => ({ url: `${origin}/whatsapp/webhook`, method: "POST" as const, perRequest: signed }),
      bare: () => ({ url: `${origin}/`, method: "GET" as const }),
    };
    const results: Record<keyof typeof cases, LoadResult[]> = { webhook: [], bare: [] };
    const floors: Awaited<ReturnType<typeof commitFloor>>[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = (round % 2 === 0 ? ["bare", "webhook"] : ["webhook", "bare"]) as (keyof typeof cases)[];
      console.log(`webhook: round ${round + 1}/${rounds} commit floor`);
      floors.push(await commitFloor(databaseUrl.href, durationSeconds));
      for (const name of order) {
        console.log(`webhook: round ${round + 1}/${rounds} ${name}`);
        results[name].push(
          await runLoad({
            ...cases[name](),
            connections: CONNECTIONS,
            durationSeconds,
            warmupSeconds: round === 0 ? warmupSeconds : 0,
            serverPid: server.pid,
          }),
        );
      }
    }
    // Nothing acknowledged may be missing: at least every 2xx of the measured rounds is an inbox row, and no
    // more rows than deliveries were sent (warm-up deliveries and ones cut off at the end lie in between).
    const sent = sequence;
    const acknowledged = results.webhook.reduce((sum, r) => sum + r.requests, 0);
    const inbox = postgres(databaseUrl.href, { max: 1, onnotice: () => {} });
    const [row] = await inbox<{ n: string }[]>`SELECT count(*)::text AS n FROM messaging.inbox`;
    await inbox.end();
    const stored = Number(row?.n ?? 0);

    const summary = (name: keyof typeof cases) => ({
      requestsPerSecond: median2(results[name], (r) => r.requestsPerSecond),
      latencyP50Ms: median2(results[name], (r) => r.latencyP50Ms),
      latencyP99Ms: median2(results[name], (r) => r.latencyP99Ms),
      serverCpuUsPerRequest: median2(results[name], (r) => r.serverCpuUsPerRequest ?? Number.NaN),
      non2xx: results[name].reduce((sum, r) => sum + r.non2xx, 0),
      errors: results[name].reduce((sum, r) => sum + r.errors, 0),
    });
    const floor = {
      requestsPerSecond: median(floors.map((f) => f.requestsPerSecond)),
      latencyP50Ms: median(floors.map((f) => f.latencyP50Ms)),
      latencyP99Ms: median(floors.map((f) => f.latencyP99Ms)),
    };
    const webhook = summary("webhook");
    const bare = summary("bare");
    const rpsRatio = webhook.requestsPerSecond / bare.requestsPerSecond;
    const valid = webhook.non2xx === 0 && webhook.errors === 0 && bare.non2xx === 0 && bare.errors === 0;
    const invalidNote = valid
      ? []
      : [
          `invalid run: ${webhook.non2xx + bare.non2xx} non-2xx answers, ${webhook.errors + bare.errors} errors`,
        ];
    const targets: Target[] = [
      {
        name: "Webhook acknowledgement throughput",
        goal: "≥ 0.5x the bare route's req/s",
        measured: `${sig(webhook.requestsPerSecond)} vs ${sig(bare.requestsPerSecond)} req/s = ${rpsRatio.toFixed(2)}x${valid ? "" : " (INVALID RUN)"}`,
        met: valid ? rpsRatio >= 0.5 : null,
      },
      {
        name: "Webhook acknowledgement p99",
        goal: "< 25 ms at that load",
        measured: `p99 ${webhook.latencyP99Ms} ms, p50 ${webhook.latencyP50Ms} ms`,
        met: valid ? webhook.latencyP99Ms < 25 : null,
      },
    ];
    const row2 = (label: string, s: typeof webhook) => [
      label,
      sig(s.requestsPerSecond),
      `${(s.requestsPerSecond / bare.requestsPerSecond).toFixed(2)}x`,
      String(s.latencyP50Ms),
      String(s.latencyP99Ms),
      sig(s.serverCpuUsPerRequest),
    ];
    return {
      ...base,
      method: [
        "The reference server (`examples/server`, `startServer(loadConfig(env))`) in its own process on a database created for the run on the real PostgreSQL, `LOG_LEVEL=warn`, the WhatsApp channel configured with an app secret. Its worker is held back (`MESSAGING_WORKER_START_DELAY_MS`) so the run measures the acknowledgement path alone: read the capped raw body, check the HMAC-SHA256 signature in constant time, parse, commit the inbox row, answer 200.",
        `Signed \`POST /whatsapp/webhook\` deliveries, one text message each with a unique message id, signed by the load generator per request; against \`GET /\` of the same server (the server has no bare route: \`GET /\` is excluded from JWT and answers a small JSON document). ${CONNECTIONS} connections, ${warmupSeconds} s warm-up, ${rounds} interleaved rounds of ${durationSeconds} s, medians.`,
        `Database ceiling: ${CONNECTIONS} postgres.js clients in the bench process, each committing one single-row \`INSERT ... ON CONFLICT DO NOTHING\` (the delivery's JSON) after another on the same database — the most acknowledgements per second that wait for their own durable commit can reach here; webhook = ${(webhook.requestsPerSecond / floor.requestsPerSecond).toFixed(2)}x of it.`,
        `Check: ${stored} inbox rows for ${acknowledged} deliveries acknowledged in the measured rounds and ${sent} sent in all (warm-up included) — ${acknowledged <= stored && stored <= sent ? "consistent: nothing acknowledged is missing" : "INCONSISTENT"}.`,
      ],
      tables: [
        {
          title: "Webhook acknowledgement against the bare route",
          columns: ["route", "req/s", "× bare", "p50 ms", "p99 ms", "server CPU µs/req"],
          rows: [
            row2("GET / (bare route, same server)", bare),
            row2("POST /whatsapp/webhook, signed, inbox write", webhook),
            [
              "database ceiling: one durable INSERT per op, no HTTP",
              sig(floor.requestsPerSecond),
              `${(floor.requestsPerSecond / bare.requestsPerSecond).toFixed(2)}x`,
              floor.latencyP50Ms.toFixed(1),
              floor.latencyP99Ms.toFixed(1),
              "",
            ],
          ],
          notes: invalidNote,
        },
      ],
      charts: [
        {
          title: "Webhook acknowledgement, req/s",
          unit: "requests per second",
          higherIsBetter: true,
          sections: [
            {
              name: "reference server",
              bars: [
                { label: "GET / (bare route)", kind: "floor", value: bare.requestsPerSecond },
                { label: "POST /whatsapp/webhook", kind: "ours", value: webhook.requestsPerSecond },
                {
                  label: "durable INSERT alone (database ceiling)",
                  kind: "floor",
                  value: floor.requestsPerSecond,
                },
              ],
            },
          ],
        },
      ],
      targets,
      figures: {
        webhook,
        bare,
        databaseCeiling: floor,
        rounds: results,
        ceilingRounds: floors,
        deliveriesSent: sent,
        deliveriesAcknowledged: acknowledged,
        inboxRows: stored,
      },
    };
  } finally {
    await server?.stop();
    await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
