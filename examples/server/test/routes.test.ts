import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, signToken, startTestServer, type TestServer } from "./helpers.js";

// biome-ignore lint/suspicious/noExplicitAny: the parsed OpenAPI document is walked by key in assertions
type OpenApiJson = Record<string, any>;

describe("routes of the reference server", () => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startTestServer();
    admin = await signToken(["platform:admin"]);
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("GET / names the server, the API version and the docs, without a token", async () => {
    const result = await request(server, "GET", "/");
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ name: "agent-platform", version: "2.5.6", docs: "/docs" });
  });

  it("GET /health answers ok when every database answers, without a token", async () => {
    const result = await request(server, "GET", "/health");
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ status: "ok" });
  });

  describe("GET /openapi.json", () => {
    let document: OpenApiJson;
    beforeAll(async () => {
      const result = await request(server, "GET", "/openapi.json");
      expect(result.status).toBe(200);
      document = result.body as OpenApiJson;
    });

    it("is a valid OpenAPI 3.1 document of version 2.5.6", async () => {
      const validation = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
      expect(validation.valid ? "" : compileErrors(validation)).toBe("");
      expect(validation.warnings).toEqual([]);
      expect(document.openapi).toBe("3.1.0");
      expect(document.info.version).toBe("2.5.6");
    });

    it("names the error schemas and uses them for the migrate operation", () => {
      const schemas = Object.keys(document.components.schemas);
      for (const name of [
        "BadRequestResponse",
        "UnauthenticatedResponse",
        "NotFoundResponse",
        "ValidationErrorResponse",
        "InternalServerErrorResponse",
      ]) {
        expect(schemas).toContain(name);
        expect(document.components.schemas[name].required).toEqual(["detail"]);
      }
      const responses = document.paths["/databases/{db_id}/migrate"].post.responses;
      const refOf = (status: string) => responses[status].content["application/json"].schema.$ref;
      expect(refOf("400")).toBe("#/components/schemas/BadRequestResponse");
      expect(refOf("401")).toBe("#/components/schemas/UnauthenticatedResponse");
      expect(refOf("404")).toBe("#/components/schemas/NotFoundResponse");
      expect(refOf("422")).toBe("#/components/schemas/ValidationErrorResponse");
      expect(refOf("500")).toBe("#/components/schemas/InternalServerErrorResponse");
    });

    it("declares each operation's scopes from the JWT middleware's table, and public ones as public", () => {
      expect(document.components.securitySchemes.HTTPBearer).toMatchObject({
        type: "http",
        scheme: "bearer",
      });
      const write = document.paths["/databases/{db_id}/migrate"].post;
      expect(write.security).toEqual([{ HTTPBearer: ["config:write"] }]);
      expect(write["x-required-scopes"]).toEqual(["config:write"]);
      expect(write.description).toContain("Requires a bearer token with scope `config:write`.");
      expect(document.paths["/databases/all/migrate"].post.security).toEqual([
        { HTTPBearer: ["config:write"] },
      ]);
      expect(document.paths["/databases/{db_id}/migrations"].get.security).toEqual([
        { HTTPBearer: ["config:read"] },
      ]);
      expect(document.paths["/"].get.security).toEqual([]);
      expect(document.paths["/health"].get.security).toEqual([]);
      expect(document.paths["/health"].get["x-required-scopes"]).toBeUndefined();
    });

    it("gives every operation an operationId and names this server's address", () => {
      for (const [path, item] of Object.entries(document.paths as OpenApiJson)) {
        for (const [method, operation] of Object.entries(item as OpenApiJson)) {
          expect(operation.operationId, `${method} ${path}`).toMatch(/^[a-z_]+$/);
        }
      }
      expect(document.servers).toEqual([{ url: server.url, description: "This server" }]);
    });
  });

  it("GET /docs, /redoc and /docs/oauth2-redirect are pages whose files this server serves, without a token", async () => {
    const docs = await request(server, "GET", "/docs");
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/);
    expect(docs.headers.get("content-security-policy")).toMatch(/default-src 'self'/);
    const redoc = await request(server, "GET", "/redoc");
    expect(redoc.status).toBe(200);
    const redirect = await request(server, "GET", "/docs/oauth2-redirect");
    expect(redirect.status).toBe(200);
    const pages = [docs.text, redoc.text, redirect.text].join("\n");
    // Every script and stylesheet is this server's own.
    expect(pages).not.toMatch(/https?:\/\//);
    const files = [...pages.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    expect(files).toEqual(
      expect.arrayContaining([
        "/docs/swagger-ui.css",
        "/docs/swagger-ui-bundle.js",
        "/docs/swagger-init.js",
        "/docs/redoc.standalone.js",
        "oauth2-redirect.js",
      ]),
    );
    for (const file of files) {
      const asset = await request(
        server,
        "GET",
        new URL(file, `${server.url}/docs/oauth2-redirect`).pathname,
      );
      expect(asset.status, file).toBe(200);
      expect(asset.text.length, file).toBeGreaterThan(100);
    }
    // Only the listed files: nothing else of the npm package (or the disk) is reachable.
    expect((await request(server, "GET", "/docs/package.json")).status).toBe(404);
    // An encoded slash is refused by the path rule (400) before any route.
    expect([400, 404]).toContain((await request(server, "GET", "/docs/..%2fpackage.json")).status);
    expect((await request(server, "GET", "/docs/__proto__")).status).toBe(404);
  });

  it("GET /databases/{db_id}/migrations needs config:read and reports the status", async () => {
    expect((await request(server, "GET", "/databases/default/migrations")).status).toBe(401);
    const writeOnly = await signToken(["config:write"]);
    const forbidden = await request(server, "GET", "/databases/default/migrations", writeOnly);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({
      detail: "Insufficient permissions. Required scope(s): config:read",
      error_code: "FORBIDDEN",
    });
    const result = await request(
      server,
      "GET",
      "/databases/default/migrations",
      await signToken(["config:read"]),
    );
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ db_id: "default", current: null, latest: "2.5.6", applied: [] });
    expect((result.body as { pending: unknown[] }).pending).toEqual([
      { version: "2.0.0", name: "baseline" },
      { version: "2.3.0", name: "session_summaries" },
      { version: "2.5.0", name: "approvals" },
      { version: "2.5.6", name: "knowledge_content_hash" },
    ]);
  });

  it("POST /databases/all/migrate is its own route, not db_id 'all'", async () => {
    const result = await request(server, "POST", "/databases/all/migrate?target_version=2.3.0", admin);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      message: "All databases migrated successfully to version 2.3.0",
      results: {
        default: {
          status: 200,
          message: "Database migrated successfully to version 2.3.0",
          db_id: "default",
          from_version: null,
          to_version: "2.3.0",
          direction: "up",
          applied: ["2.0.0", "2.3.0"],
        },
      },
    });
    const unknown = await request(server, "POST", "/databases/all/migrate?target_version=3.0.0", admin);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      detail: "Unknown target version '3.0.0'. Known versions: 2.0.0, 2.3.0, 2.5.0, 2.5.6",
      error_code: "BAD_REQUEST",
    });
    const malformed = await request(server, "POST", "/databases/all/migrate?target_version=x", admin);
    expect(malformed.status).toBe(422);
    const status = await request(server, "GET", "/databases/all/migrations", admin);
    expect(status.body).toEqual({ detail: "No database found with id 'all'", error_code: "NOT_FOUND" });
  });

  it("unknown routes answer 404 with the error body (401 first without a token)", async () => {
    const result = await request(server, "GET", "/no/such/route", admin);
    expect(result.status).toBe(404);
    expect(result.body).toEqual({ detail: "No route for GET /no/such/route", error_code: "NOT_FOUND" });
    const wrongMethod = await request(server, "DELETE", "/databases/default/migrate", admin);
    expect(wrongMethod.status).toBe(404);
    expect((wrongMethod.body as { error_code: string }).error_code).toBe("NOT_FOUND");
    const anonymous = await request(server, "GET", "/no/such/route");
    expect(anonymous.status).toBe(401);
    expect((anonymous.body as { error_code: string }).error_code).toBe("UNAUTHENTICATED");
  });

  it("logs one JSON line per request with its request id, never the token", async () => {
    const result = await request(server, "GET", "/databases/default/migrations?secret=hunter2", admin);
    const id = result.headers.get("x-request-id");
    expect(id).toMatch(/^[\w-]+$/);
    const records = server.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const record = records.find((r) => r.req_id === id);
    expect(record).toMatchObject({
      msg: "request completed",
      method: "GET",
      path: "/databases/default/migrations",
      status: 200,
    });
    // The migrator's events (from the migrate-all call above) are logged with their database id, one
    // `level` key per line.
    expect(records.some((r) => r.msg === "migration committed" && r.db_id === "default")).toBe(true);
    for (const line of server.logs) expect(line.match(/"level":/g)).toHaveLength(1);
    const all = server.logs.join("");
    expect(all).not.toContain(admin);
    expect(all).not.toContain(admin.split(".")[2]);
    expect(all).not.toContain("hunter2");
  });
});
