import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, signToken, startTestServer, type TestServer } from "./helpers.js";

// With JWT_TOKEN_SOURCE=cookie, a cross-site HTML form (POST, form-encoded, no custom header, so no
// CORS preflight) carries the operator's cookie: it must not run a migration.

// A cross-site form always sends its fields; the legitimate calls send none, since the migrate operation
// refuses any body (target_version is a query parameter).
function post(server: TestServer, path: string, headers: Record<string, string>, body = "") {
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const sent = httpRequest(`${server.url}${path}`, { method: "POST", headers }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

describe("cookie tokens on the reference server", () => {
  let server: TestServer;
  let cookie: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { JWT_TOKEN_SOURCE: "cookie" } });
    cookie = `access_token=${await signToken(["platform:admin"])}`;
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  const form = { "content-type": "application/x-www-form-urlencoded" };
  const currentVersion = async () => {
    const status = await new Promise<unknown>((resolve, reject) => {
      const sent = httpRequest(
        `${server.url}/databases/default/migrations`,
        { headers: { cookie } },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8");
          });
          res.on("end", () => resolve(JSON.parse(text)));
        },
      );
      sent.on("error", reject);
      sent.end();
    });
    return (status as { current: string | null }).current;
  };

  it("refuses a cross-site form post, and the database is not migrated", async () => {
    for (const headers of [
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      { origin: "https://evil.example" },
      { "sec-fetch-site": "same-site" },
      {},
    ]) {
      const answer = await post(server, "/databases/default/migrate", { ...form, cookie, ...headers }, "x=1");
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect((answer.body as { error_code: string }).error_code).toBe("CSRF_REJECTED");
    }
    expect(await currentVersion()).toBeNull();
  });

  it("migrates for a same-origin request", async () => {
    const answer = await post(server, "/databases/default/migrate", {
      cookie,
      "sec-fetch-site": "same-origin",
      origin: server.url,
    });
    expect(answer.status).toBe(200);
    expect(await currentVersion()).toBe("2.5.6");
  });

  it("JWT_ALLOWED_ORIGINS lets a listed front end post with the cookie", async () => {
    const listed = await startTestServer({
      env: { JWT_TOKEN_SOURCE: "cookie", JWT_ALLOWED_ORIGINS: "https://app.example.com" },
    });
    try {
      const from = (origin: string) =>
        post(listed, "/databases/default/migrate", { cookie, origin, "sec-fetch-site": "same-site" });
      expect((await from("https://evil.example")).status).toBe(403);
      expect((await from("https://app.example.com")).status).toBe(200);
    } finally {
      await listed.cleanup();
    }
  });

  it("still takes no token from the header in cookie mode", async () => {
    const answer = await request(
      server,
      "POST",
      "/databases/default/migrate",
      await signToken(["platform:admin"]),
    );
    expect(answer.status).toBe(401);
  });
});
