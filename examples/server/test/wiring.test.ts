import { validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, signToken, startTestServer, type TestServer } from "./helpers.js";

const VERIFY_TOKEN = "verify-me-9f2c";

describe("the messaging channel wired into the server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
        WHATSAPP_APP_SECRET: "app-secret",
        WHATSAPP_ACCESS_TOKEN: "access-token",
        WHATSAPP_PHONE_NUMBER_ID: "1234567890",
        // Nothing is sent in this test; an address nothing listens on keeps it offline.
        WHATSAPP_API_BASE_URL: "http://127.0.0.1:9/v25.0",
      },
    });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("exactly the webhook and the status skip the JWT middleware", async () => {
    expect((await request(server, "GET", "/whatsapp/status")).status).toBe(200);
    const handshake = await request(
      server,
      "GET",
      `/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=4242`,
    );
    expect(handshake.status).toBe(200);
    expect(handshake.text).toBe("4242");
    expect(server.logs.join("")).not.toContain(VERIFY_TOKEN);
  });

  it("the inbox listing stays behind JWT with scope config:read", async () => {
    expect((await request(server, "GET", "/whatsapp/inbox")).status).toBe(401);
    const forbidden = await request(server, "GET", "/whatsapp/inbox", await signToken(["config:write"]));
    expect(forbidden.body).toEqual({
      detail: "Insufficient permissions. Required scope(s): config:read",
      error_code: "FORBIDDEN",
    });
    expect((await request(server, "GET", "/whatsapp/inbox", await signToken(["config:read"]))).status).toBe(
      200,
    );
  });

  it("the inbox operations need config:read to read, config:write to retry and config:delete to erase", async () => {
    const routes: [string, string, string][] = [
      ["GET", "/whatsapp/inbox/stats", "config:read"],
      ["POST", "/whatsapp/inbox/retry?status=failed&limit=5", "config:write"],
      ["POST", "/whatsapp/inbox/wamid.none/retry", "config:write"],
      ["DELETE", "/whatsapp/inbox?session_id=whatsapp:1234567890:491", "config:delete"],
    ];
    const scopes = ["config:read", "config:write", "config:delete"];
    for (const [method, path, scope] of routes) {
      expect((await request(server, method, path)).status, `${method} ${path}`).toBe(401);
      for (const other of scopes.filter((each) => each !== scope)) {
        const refused = await request(server, method, path, await signToken([other]));
        expect(refused.body, `${method} ${path} with ${other}`).toEqual({
          detail: `Insufficient permissions. Required scope(s): ${scope}`,
          error_code: "FORBIDDEN",
        });
      }
      const allowed = await request(server, method, path, await signToken([scope]));
      expect(allowed.status, `${method} ${path} with ${scope}`).toBe(path.includes("wamid.none") ? 404 : 200);
    }
    const stats = await request(server, "GET", "/whatsapp/inbox/stats", await signToken(["config:read"]));
    expect(stats.body).toEqual({
      channel: "whatsapp",
      counts: { pending: 0, processing: 0, done: 0, failed: 0, rejected: 0, notice: 0 },
      oldest_pending_ms: null,
      oldest_pending_at: null,
    });
  });

  it("every route is public or mapped to a scope: unmapped routes are denied by default", async () => {
    // The document lists every route the server registers through OpenAPI; /docs and /openapi.json
    // are the two it serves beside it. A route someone adds without a mapping fails here.
    const document = (await request(server, "GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => [method.toUpperCase(), path.replace(/\{[^}]+\}/g, "x")]),
    );
    routes.push(["GET", "/docs"], ["GET", "/openapi.json"]);
    expect(routes.length).toBeGreaterThan(5);
    const noScopes = await signToken([]);
    for (const [method, path] of routes as [string, string][]) {
      const answer = await request(server, method, path, noScopes);
      const detail = (answer.body as { detail?: unknown } | undefined)?.detail;
      expect(String(detail), `${method} ${path}`).not.toMatch(/No scope mapping/);
    }
    // The check itself can fail: a route nobody mapped is refused, naming it.
    const unmapped = await request(server, "GET", "/no/such/route", noScopes);
    expect(unmapped.body).toEqual({
      detail: "Insufficient permissions. No scope mapping for GET /no/such/route: add one to scopeMappings",
      error_code: "FORBIDDEN",
    });
  });

  it("its routes are in the OpenAPI document, which stays valid", async () => {
    const document = (await request(server, "GET", "/openapi.json")).body as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/whatsapp/webhook",
        "/whatsapp/status",
        "/whatsapp/inbox",
        "/whatsapp/inbox/stats",
        "/whatsapp/inbox/retry",
        "/whatsapp/inbox/{message_id}/retry",
        "/databases/{db_id}/migrate",
      ]),
    );
    const operations = document.paths as Record<string, Record<string, { security?: unknown }>>;
    expect(operations["/whatsapp/inbox/stats"]?.get?.security).toEqual([{ HTTPBearer: ["config:read"] }]);
    expect(operations["/whatsapp/inbox/retry"]?.post?.security).toEqual([{ HTTPBearer: ["config:write"] }]);
    expect(operations["/whatsapp/inbox/{message_id}/retry"]?.post?.security).toEqual([
      { HTTPBearer: ["config:write"] },
    ]);
    expect(operations["/whatsapp/inbox"]?.delete?.security).toEqual([{ HTTPBearer: ["config:delete"] }]);
    const validation = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
    expect(validation.valid).toBe(true);
  });
});
