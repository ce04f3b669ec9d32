import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, signToken } from "./helpers.js";
import { type AgentStub, startAgentStub } from "./messaging/support/agent-stub.js";
import { type ChildServer, spawnServer } from "./messaging/support/child-server.js";
import { type GraphStub, startGraphStub } from "./messaging/support/graph-stub.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./messaging/support/whatsapp.js";
import { find, type Sample, scrape, total } from "./prometheus.js";

/** The JSON lines the child wrote to stdout, parsed (the pino lines; the dev-token text goes to stderr). */
function records(server: ChildServer): Record<string, unknown>[] {
  return server.output.flatMap((line) => {
    if (!line.startsWith("{")) return [];
    return [JSON.parse(line) as Record<string, unknown>];
  });
}

async function eventually<T>(read: () => T | Promise<T>, ok: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

const tokenId = (token: string) => createHash("sha256").update(token).digest("hex").slice(0, 16);

describe("the server's audit trail, metrics and readiness, as an operator runs it", () => {
  let server: ChildServer;
  let metricsUrl: string;
  let graph: GraphStub;
  let agent: AgentStub;

  beforeAll(async () => {
    graph = await startGraphStub();
    agent = await startAgentStub();
    server = await spawnServer({
      ...channelEnv(`${graph.url}/v25.0`),
      AGENT_URL: agent.url,
      METRICS_PORT: "0",
      AUDIT_LOG: "all",
    });
    const listening = records(server).find((record) => typeof record.metrics === "string");
    metricsUrl = String(listening?.metrics).replace(/\/metrics$/, "");
  });
  afterAll(async () => {
    await server?.kill("SIGTERM");
    await graph?.close();
    await agent?.close();
  });

  it("logs every refusal, and with AUDIT_LOG=all every allowed request, as one JSON line without the token", async () => {
    const reader = await signToken(["config:read"]);
    const other = await signToken(["agents:read"], { signedByAnotherKey: true });
    expect((await request(server, "GET", "/databases/default/migrations")).status).toBe(401);
    expect((await request(server, "GET", "/databases/default/migrations", other)).status).toBe(401);
    expect((await request(server, "POST", "/databases/default/migrate", reader)).status).toBe(403);
    expect((await request(server, "GET", "/whatsapp/inbox", reader)).status).toBe(200);
    expect((await request(server, "GET", "/health")).status).toBe(200);

    const audit = await eventually(
      () => records(server).filter((record) => String(record.event).startsWith("access.")),
      (lines) => lines.length >= 4,
    );
    const fields = [
      "time",
      "allowed",
      "status",
      "reason",
      "method",
      "path",
      "required",
      "scopes",
      "subject",
      "issuer",
      "tokenId",
    ];
    for (const line of audit) {
      for (const field of fields) expect(line, field).toHaveProperty(field);
      expect(line.level).toBe(30);
      expect(typeof line.time).toBe("number");
    }
    expect(audit.map((line) => [line.event, line.status, line.reason])).toEqual([
      ["access.denied", 401, "token_missing"],
      ["access.denied", 401, "invalid_signature"],
      ["access.denied", 403, "insufficient_scope"],
      ["access.allowed", 200, "ok"],
    ]);
    expect(audit[0]).toMatchObject({ method: "GET", path: "/databases/default/migrations", tokenId: null });
    expect(audit[1]).toMatchObject({ subject: null, tokenId: tokenId(other), scopes: [] });
    expect(audit[2]).toMatchObject({
      allowed: false,
      method: "POST",
      path: "/databases/default/migrate",
      required: ["config:write"],
      scopes: ["config:read"],
      subject: "test-user",
      tokenId: tokenId(reader),
    });
    expect(audit[3]).toMatchObject({ allowed: true, path: "/whatsapp/inbox", required: ["config:read"] });
    const everything = server.output.join("\n");
    for (const token of [reader, other]) expect(everything).not.toContain(token.split(".")[2]);
  });

  it("is not ready while its schema is behind, and ready once migrated; /health stays the liveness check", async () => {
    const before = await request(server, "GET", "/ready");
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ error_code: "SERVICE_UNAVAILABLE" });
    const reasons = (before.body as { reasons: string[] }).reasons;
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(
      /^database 'default' schema is behind: empty < 2\.5\.6 .*platform-migrate up$/,
    );
    expect((await request(server, "GET", "/health")).status).toBe(200);

    const admin = await signToken(["platform:admin"]);
    expect((await request(server, "POST", "/databases/default/migrate", admin)).status).toBe(200);
    expect((await request(server, "POST", "/databases/default/migrate", admin)).status).toBe(200);
    const after = await request(server, "GET", "/ready");
    expect(after.status, after.text).toBe(200);
    expect(after.body).toEqual({ status: "ready" });
  });

  it("serves every series on its own listener, route labels as templates", async () => {
    const admin = await signToken(["platform:admin"]);
    expect((await request(server, "GET", "/databases/default/migrations", admin)).status).toBe(200);
    const sent = await postDelivery(
      server.url,
      delivery([textMessage("wamid.metrics-1", "15551234567", "hi")]),
    );
    expect(sent.status).toBe(200);
    await eventually(
      () => graph.accepted().length,
      (count) => count >= 1,
    );
    // The API port's /metrics is a platform route behind a token, not this.
    expect((await request(server, "GET", "/metrics")).status).toBe(401);

    const samples = await eventually(
      () => scrape(metricsUrl),
      (all) =>
        total(all, "agent_platform_inbox_processed_total", { channel: "whatsapp", outcome: "done" }) >= 1,
    );
    const requests = (labels: Record<string, string>) =>
      total(samples, "http_server_request_duration_seconds_count", labels);
    expect(
      requests({
        http_request_method: "POST",
        http_route: "/databases/{db_id}/migrate",
        http_response_status_code: "200",
      }),
    ).toBe(2);
    expect(
      requests({
        http_request_method: "GET",
        http_route: "/databases/{db_id}/migrations",
        http_response_status_code: "401",
      }),
    ).toBe(2);
    expect(requests({ http_route: "/whatsapp/webhook", http_response_status_code: "200" })).toBe(1);
    for (const sample of find(samples, "http_server_request_duration_seconds_count")) {
      expect(sample.labels.http_route).not.toContain("default");
    }
    expect(find(samples, "http_server_request_duration_seconds_bucket").length).toBeGreaterThan(0);

    expect(
      total(samples, "agent_platform_auth_decisions_total", { result: "denied", reason: "token_missing" }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      total(samples, "agent_platform_auth_decisions_total", {
        result: "denied",
        reason: "insufficient_scope",
      }),
    ).toBe(1);
    expect(
      total(samples, "agent_platform_auth_decisions_total", { result: "allowed", reason: "ok" }),
    ).toBeGreaterThanOrEqual(4);

    expect(
      total(samples, "agent_platform_inbox_processed_total", { channel: "whatsapp", outcome: "done" }),
    ).toBe(1);
    expect(
      total(samples, "agent_platform_outbound_request_duration_seconds_count", {
        target: "agent",
        status_code: "200",
      }),
    ).toBe(1);
    expect(
      total(samples, "agent_platform_outbound_request_duration_seconds_count", {
        target: "whatsapp",
        status_code: "200",
      }),
    ).toBe(1);

    expect(total(samples, "agent_platform_migrations_total", { db_id: "default", outcome: "applied" })).toBe(
      1,
    );
    expect(total(samples, "agent_platform_migrations_total", { db_id: "default", outcome: "noop" })).toBe(1);
    expect(total(samples, "agent_platform_migration_duration_seconds_count", { db_id: "default" })).toBe(2);

    const statuses = find(samples, "agent_platform_inbox_messages", { channel: "whatsapp" }).map(
      (s) => s.labels.status,
    );
    expect(statuses.sort()).toEqual(["done", "failed", "pending", "processing", "rejected"]);
    expect(
      find(samples, "agent_platform_inbox_oldest_pending_seconds", { channel: "whatsapp" }),
    ).toHaveLength(1);

    for (const name of [
      "process_cpu_user_seconds_total",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
    ]) {
      expect(find(samples, name), name).toHaveLength(1);
    }
    expect(find(samples, "nodejs_gc_duration_seconds_count").length).toBeGreaterThan(0);
  });

  it("reads the inbox gauges from the database at most every few seconds, whatever the scrape rate", async () => {
    const first = await scrape(metricsUrl);
    const done = (samples: Sample[]) =>
      total(samples, "agent_platform_inbox_messages", { channel: "whatsapp", status: "done" });
    // A second message is answered now; 20 scrapes in a row still show the reading from before it.
    const sent = await postDelivery(
      server.url,
      delivery([textMessage("wamid.metrics-2", "15551234567", "again")]),
    );
    expect(sent.status).toBe(200);
    await eventually(
      () => graph.accepted().length,
      (count) => count >= 2,
    );
    const readings = new Set<number>();
    for (let i = 0; i < 20; i++) readings.add(done(await scrape(metricsUrl)));
    expect(readings.size).toBeLessThanOrEqual(2);
    const later = await eventually(
      () => scrape(metricsUrl),
      (samples) => done(samples) === done(first) + 1,
      8_000,
    );
    expect(done(later)).toBe(done(first) + 1);
  });

  it("keeps the label sets bounded under 10,000 distinct random paths and methods", async () => {
    // Every method Node's parser accepts beyond the standard ones is one `_OTHER` label.
    const methods = [
      "GET",
      "POST",
      "PUT",
      "DELETE",
      "PATCH",
      "HEAD",
      "OPTIONS",
      "PROPFIND",
      "MKCOL",
      "PURGE",
      "SEARCH",
      "UNLOCK",
    ];
    const random = () => Math.random().toString(36).slice(2);
    let next = 0;
    const worker = async () => {
      while (next < 10_000) {
        const index = next++;
        const method = methods[index % methods.length] as string;
        const path = `/${random()}/${random()}${index % 3 === 0 ? `/%F0%9F%98%80${random()}` : ""}?q=${random()}`;
        const response = await fetch(`${server.url}${path}`, { method });
        await response.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const samples = await scrape(metricsUrl);
    const series = find(samples, "http_server_request_duration_seconds_count");
    const routes = new Set(series.map((sample) => sample.labels.http_route));
    const methodLabels = new Set(series.map((sample) => sample.labels.http_request_method));
    expect(
      total(samples, "http_server_request_duration_seconds_count", { http_route: "unmatched" }),
    ).toBeGreaterThanOrEqual(10_000 * 0.99);
    expect(routes.size).toBeLessThan(20);
    expect(
      [...methodLabels].every((method) =>
        /^(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH|_OTHER)$/.test(String(method)),
      ),
    ).toBe(true);
    expect(series.length).toBeLessThan(100);
  }, 120_000);
});
