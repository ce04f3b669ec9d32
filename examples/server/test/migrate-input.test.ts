import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, signToken, startTestServer, type TestServer } from "./helpers.js";

// The input edges of the migrate operations: nothing a client sends is silently ignored, and no detail
// echoes more than 64 characters of it.

interface ErrorResult {
  status: number;
  detail: string;
  error_code: string;
}

describe("what the migrate operations refuse", () => {
  let server: TestServer;
  let writer: string;
  const current = async () =>
    (
      (await request(server, "GET", "/databases/default/migrations", await signToken(["config:read"])))
        .body as { current: string | null }
    ).current;
  const post = async (path: string, init: RequestInit = {}, token = writer): Promise<ErrorResult> => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
    });
    const body = (await response.json()) as { detail: string; error_code: string };
    expect(Object.keys(body).sort()).toEqual(["detail", "error_code"]);
    return { status: response.status, ...body };
  };

  beforeAll(async () => {
    server = await startTestServer();
    writer = await signToken(["config:write"]);
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it.each(["/databases/default/migrate", "/databases/all/migrate"])(
    "422 for a JSON body on %s, which says target_version is a query parameter; nothing migrates",
    async (path) => {
      const result = await post(path, {
        body: JSON.stringify({ target_version: "2.3.0" }),
        headers: { "content-type": "application/json" },
      });
      expect(result).toMatchObject({ status: 422, error_code: "VALIDATION_ERROR" });
      expect(result.detail).toMatch(/no request body: target_version is a query parameter/);
      expect(await current()).toBeNull();
    },
  );

  it("422 for a body of any type, and for a chunked body of unknown length", async () => {
    const text = await post("/databases/default/migrate", { body: "target_version=2.3.0" });
    expect(text.status).toBe(422);
    const form = await post("/databases/default/migrate", {
      body: new URLSearchParams({ target_version: "2.3.0" }),
    });
    expect(form.status).toBe(422);
    const chunked = await post("/databases/default/migrate", {
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"target_version":"2.3.0"}'));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(422);
    expect(await current()).toBeNull();
  });

  it("a token is checked before the body: 401 without one", async () => {
    const response = await fetch(`${server.url}/databases/default/migrate`, { method: "POST", body: "{}" });
    expect(response.status).toBe(401);
  });

  it("422 for an unknown query parameter: a typo never means 'the latest version'", async () => {
    const result = await post("/databases/default/migrate?target=2.3.0");
    expect(result).toEqual({
      status: 422,
      detail: "unknown query parameter 'target'",
      error_code: "VALIDATION_ERROR",
    });
    const all = await post("/databases/all/migrate?target_version=2.3.0&dry_run=1");
    expect(all).toMatchObject({ status: 422, detail: "unknown query parameter 'dry_run'" });
    expect(await current()).toBeNull();
  });

  it("the migrator's own grammar decides what a version is: 2.5.6-01 is 422, not an unknown 400", async () => {
    const result = await post("/databases/default/migrate?target_version=2.5.6-01");
    expect(result.status).toBe(422);
    expect(result.detail).toBe(
      "target_version: must be a version such as 2.5.6 (MAJOR.MINOR.PATCH, optional -PRERELEASE), got '2.5.6-01'",
    );
  });

  it("echoes at most 64 characters of a long version, parameter name or path", async () => {
    const digits = "9".repeat(3000);
    const malformed = await post(`/databases/default/migrate?target_version=${digits}`);
    expect(malformed.status).toBe(422);
    expect(malformed.detail).toContain(`got '${"9".repeat(64)}…'`);
    expect(malformed.detail.length).toBeLessThan(200);

    // Within the migrator's 256-character bound on a version, so it parses and is merely unknown.
    const unknown = await post(`/databases/default/migrate?target_version=9.9.9-${"a".repeat(200)}`);
    expect(unknown.status).toBe(400);
    expect(unknown.detail).toMatch(/^Unknown target version '9\.9\.9-a{58}…'\. Known versions: /);

    const name = "x".repeat(3000);
    const parameter = await post(`/databases/default/migrate?${name}=1`);
    expect(parameter).toMatchObject({ status: 422, detail: `unknown query parameter '${"x".repeat(64)}…'` });

    // An admin token: any other is refused (403) on an unmapped route before the 404.
    const path = await request(server, "GET", `/${"p".repeat(3000)}`, await signToken(["platform:admin"]));
    expect(path.status).toBe(404);
    expect((path.body as { detail: string }).detail).toBe(`No route for GET /${"p".repeat(63)}…`);
  });

  it("an empty body with a Content-Type is no body: 200", async () => {
    const response = await fetch(`${server.url}/databases/default/migrate?target_version=2.3.0`, {
      method: "POST",
      headers: { authorization: `Bearer ${writer}`, "content-type": "application/json" },
    });
    expect(response.status).toBe(200);
    expect(await current()).toBe("2.3.0");
  });
});
