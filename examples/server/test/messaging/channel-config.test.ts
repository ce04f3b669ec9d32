import { ConfigError } from "@agent-platform/common";
import pino from "pino";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messagingConfigSchema, wireMessaging } from "../../src/messaging/index.js";
import { TEST_DATABASE_URL } from "../databases.js";
import { signToken, startTestServer, type TestServer } from "../helpers.js";
import { type GraphStub, startGraphStub, waitFor } from "./support/graph-stub.js";
import { startMessagingServer } from "./support/server.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./support/whatsapp.js";

describe("channel configuration", () => {
  // Never connects: these configurations are refused before the database is touched.
  const unusedSql = postgres("postgres://127.0.0.1:1/unused", { max: 1 });
  const create = (env: Record<string, string>, production = false) =>
    wireMessaging({
      config: messagingConfigSchema.parse(env),
      sql: unusedSql,
      logger: pino({ level: "silent" }),
      environment: production ? "production" : "development",
      sharedDatabase: false,
    });
  afterAll(() => unusedSql.end());

  it("refuses a partial configuration, naming what is missing", async () => {
    const attempt = create({ WHATSAPP_ACCESS_TOKEN: "token" });
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    await expect(attempt).rejects.toThrow(/WHATSAPP_PHONE_NUMBER_ID.*WHATSAPP_APP_SECRET/);
  });

  it("does not honour skipping signature validation in production", async () => {
    await expect(
      create(
        {
          WHATSAPP_ACCESS_TOKEN: "t",
          WHATSAPP_PHONE_NUMBER_ID: "1",
          WHATSAPP_SKIP_SIGNATURE_VALIDATION: "true",
        },
        true,
      ),
    ).rejects.toThrow(
      /whatsapp skipSignatureValidation: true is refused in production.*\(set with WHATSAPP_APP_SECRET\)/,
    );
  });

  it("names the variable of a bad value", () => {
    const result = messagingConfigSchema.safeParse({ WHATSAPP_API_BASE_URL: "ftp://x", AGENT_URL: "nope" });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path[0]).sort()).toEqual([
      "AGENT_URL",
      "WHATSAPP_API_BASE_URL",
    ]);
  });
});

describe("the reference server without the channel configured", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.cleanup());

  it("says so on GET /whatsapp/status and has no webhook", async () => {
    const status = await fetch(`${server.url}/whatsapp/status`);
    expect(await status.json()).toEqual({ channel: "whatsapp", configured: false });
    const webhook = await postDelivery(server.url, delivery([textMessage("x", "1", "x")]));
    expect(webhook.status).toBe(404);
    expect(await webhook.json()).toMatchObject({ error_code: "NOT_FOUND" });
  });
});

describe("the reference server with the channel configured", () => {
  let graph: GraphStub;
  let server: Awaited<ReturnType<typeof startMessagingServer>>;
  beforeAll(async () => {
    graph = await startGraphStub();
    server = await startMessagingServer("pglite", channelEnv(graph.url, { WHATSAPP_VERIFY_TOKEN: "" }));
  });
  afterAll(async () => {
    await server?.stop();
    await graph?.close();
  });

  it("answers the handshake with 500 naming the variable when no verify token is configured", async () => {
    const response = await fetch(
      `${server.url}/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`,
    );
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      detail: "WHATSAPP_VERIFY_TOKEN is not configured",
      error_code: "INTERNAL_SERVER_ERROR",
    });
  });

  it("keeps the inbox listing behind JWT with scope config:read", async () => {
    const anonymous = await fetch(`${server.url}/whatsapp/inbox`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error_code: "UNAUTHENTICATED" });
    const withoutScope = await fetch(`${server.url}/whatsapp/inbox`, {
      headers: { authorization: `Bearer ${await signToken(["config:write"])}` },
    });
    expect(withoutScope.status).toBe(403);
    expect(await withoutScope.json()).toMatchObject({ error_code: "FORBIDDEN" });
    // The server's own 422 hook (one source, in common/hono): every bad parameter named, in one body.
    const badQuery = await fetch(`${server.url}/whatsapp/inbox?status=lost&limit=0`, {
      headers: { authorization: `Bearer ${await signToken(["config:read"])}` },
    });
    expect(badQuery.status).toBe(422);
    expect(await badQuery.json()).toEqual({
      detail: expect.stringMatching(/^status: .+; limit: /),
      error_code: "VALIDATION_ERROR",
    });
  });

  it("documents its routes in the server's OpenAPI document", async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown }>>;
    };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(["/whatsapp/status", "/whatsapp/webhook", "/whatsapp/inbox"]),
    );
    // Scopes as the JWT middleware enforces them; the signature-checked webhook is public to JWT.
    expect(document.paths["/whatsapp/inbox"]?.get?.security).toEqual([{ HTTPBearer: ["config:read"] }]);
    expect(document.paths["/whatsapp/webhook"]?.post?.security).toEqual([]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)("the webhook with its database unavailable (PostgreSQL)", () => {
  it("answers 503 and stores nothing, then accepts and replies once the database is back", async () => {
    const graph = await startGraphStub();
    const server = await startMessagingServer("postgres", channelEnv(graph.url));
    const admin = postgres(TEST_DATABASE_URL as string, { max: 1, onnotice: () => {} });
    try {
      const name = await server.databaseName();
      expect(name).toMatch(/^server_test_[a-z0-9_]+$/);
      await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name}`;

      const payload = delivery([textMessage("wamid.dbdown", "15558880000", "still there?")]);
      const refused = await postDelivery(server.url, payload);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({
        detail: "Inbox unavailable, retry later",
        error_code: "SERVICE_UNAVAILABLE",
      });

      await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      expect(await server.inboxIds()).toEqual([]);
      const accepted = await postDelivery(server.url, payload);
      expect(await accepted.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
      await waitFor("the reply", () => graph.accepted().length === 1);
    } finally {
      await admin.end();
      await server.stop();
      await graph.close();
    }
  });
});
