import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, signToken } from "./helpers.js";
import { type AgentStub, startAgentStub } from "./messaging/support/agent-stub.js";
import { type ChildServer, spawnServer } from "./messaging/support/child-server.js";
import { type GraphStub, startGraphStub } from "./messaging/support/graph-stub.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./messaging/support/whatsapp.js";

/** One span as the OTLP/HTTP JSON encoding carries it, attributes flattened. */
interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly attributes: Record<string, unknown>;
  readonly links: { traceId: string; spanId: string }[];
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpAttribute = { key: string; value: OtlpValue };

function otlpValue(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  return value.doubleValue;
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, otlpValue(value)]));
}

/** A real OTLP/HTTP receiver on loopback: decodes each `POST /v1/traces` (JSON encoding) into spans. */
async function startReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.method === "POST") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: {
            resource: { attributes: OtlpAttribute[] };
            scopeSpans: {
              spans: {
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                name: string;
                attributes?: OtlpAttribute[];
                links?: { traceId: string; spanId: string }[];
              }[];
            }[];
          }[];
        };
        for (const resource of body.resourceSpans) {
          const service = String(attributes(resource.resource.attributes)["service.name"]);
          for (const scope of resource.scopeSpans) {
            for (const span of scope.spans) {
              spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? "",
                name: span.name,
                attributes: attributes(span.attributes),
                links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
              });
            }
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

async function until<T>(read: () => T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("not received in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("traces over OTLP/HTTP to a receiver on loopback", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let server: ChildServer;
  let graph: GraphStub;
  let agent: AgentStub;
  beforeAll(async () => {
    receiver = await startReceiver();
    graph = await startGraphStub();
    agent = await startAgentStub();
    server = await spawnServer({
      ...channelEnv(`${graph.url}/v25.0`),
      AGENT_URL: agent.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
  });
  afterAll(async () => {
    await server?.kill("SIGTERM");
    await Promise.all([receiver?.close(), graph?.close(), agent?.close()]);
  });

  it("follows a signed WhatsApp delivery from the webhook, under the caller's trace, to the agent call and the reply", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const raw = JSON.stringify(delivery([textMessage("wamid.traced-1", "15551234567", "hello")]));
    const { whatsAppSignature } = await import("@agent-platform/test-support/webhook-signatures");
    const { APP_SECRET } = await import("./messaging/support/whatsapp.js");
    const sent = await fetch(`${server.url}/whatsapp/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": whatsAppSignature(raw, APP_SECRET),
        traceparent: `00-${traceId}-${callerSpan}-01`,
      },
      body: raw,
    });
    expect(sent.status).toBe(200);

    const webhook = await until(() => receiver.spans.find((span) => span.name === "messaging webhook"));
    expect(webhook).toMatchObject({
      service: "agent-platform-server",
      traceId,
      attributes: { channel: "whatsapp", messages: 1, duplicates: 0 },
    });
    const serverSpan = receiver.spans.find((span) => span.spanId === webhook.parentSpanId);
    expect(serverSpan).toMatchObject({ name: "POST /whatsapp/webhook", traceId, parentSpanId: callerSpan });
    const insert = await until(() => receiver.spans.find((span) => span.name === "messaging inbox.insert"));
    expect(insert).toMatchObject({ traceId, parentSpanId: webhook.spanId });

    for (const name of ["messaging agent.call", "messaging channel.send"]) {
      const span = await until(() => receiver.spans.find((candidate) => candidate.name === name));
      expect(span.links, name).toEqual([{ traceId, spanId: webhook.spanId }]);
      expect(span.attributes, name).toMatchObject({ message_id: "wamid.traced-1", channel: "whatsapp" });
    }
    // A duplicate delivery stores nothing: the span says so.
    expect((await postDelivery(server.url, JSON.parse(raw))).status).toBe(200);
    await until(() =>
      receiver.spans.find((span) => span.name === "messaging webhook" && span.attributes.duplicates === 1),
    );
  });

  it("traces a migrate request: the migrate span under the request's, one child per migration", async () => {
    const admin = await signToken(["platform:admin"]);
    const migrated = await request(server, "POST", "/databases/default/migrate", admin);
    expect(migrated.status).toBe(200);
    const applied = (migrated.body as { applied: string[] }).applied;
    expect(applied).toEqual(["2.0.0", "2.3.0", "2.5.0", "2.5.6"]);
    const migrate = await until(() =>
      receiver.spans.find(
        (span) => span.name === "migrator migrate" && span.attributes["db.schema"] === "public",
      ),
    );
    const requestSpan = receiver.spans.find((span) => span.spanId === migrate.parentSpanId);
    expect(requestSpan?.name).toBe("POST /databases/{db_id}/migrate");
    const children = await until(() => {
      const found = receiver.spans.filter(
        (span) => span.name === "migrator migration" && span.parentSpanId === migrate.spanId,
      );
      return found.length >= applied.length ? found : undefined;
    });
    expect(children.map((span) => span.attributes.version)).toEqual(applied);
    expect(children.every((span) => span.attributes.direction === "up")).toBe(true);
  });

  it("has a jwt-rbac authenticate span per request, with its result, reason, algorithm and cache hit", async () => {
    // The spans of earlier tests' tokens have arrived by now (each waited for its own).
    const earlier = receiver.spans.filter(
      (span) => span.name === "jwt-rbac authenticate" && span.attributes.algorithm === "ES256",
    ).length;
    const token = await signToken(["config:read"]);
    expect((await request(server, "GET", "/whatsapp/inbox", token)).status).toBe(200);
    expect((await request(server, "GET", "/whatsapp/inbox", token)).status).toBe(200);
    expect((await request(server, "POST", "/databases/default/migrate", token)).status).toBe(403);
    const withToken = () =>
      receiver.spans.filter(
        (span) => span.name === "jwt-rbac authenticate" && span.attributes.algorithm === "ES256",
      );
    const spans = await until(() => {
      const found = withToken().slice(earlier);
      return found.length >= 3 ? found : undefined;
    });
    expect(spans.map((span) => span.attributes)).toEqual([
      // The cache admits a token on its second sighting: the third request is the first hit.
      { result: "allowed", reason: "ok", algorithm: "ES256", cache_hit: false },
      { result: "allowed", reason: "ok", algorithm: "ES256", cache_hit: false },
      { result: "denied", reason: "insufficient_scope", algorithm: "ES256", cache_hit: true },
    ]);
    for (const span of spans) {
      const parent = receiver.spans.find((candidate) => candidate.spanId === span.parentSpanId);
      expect(parent?.name).toMatch(/^(GET|POST) \//);
    }
  });
});
