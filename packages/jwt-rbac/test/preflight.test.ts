import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestKeys, testKeys } from "./fixtures/keys.js";
import { MOUNTED_ADAPTERS, startMounted } from "./fixtures/mounted.js";
import { rawRequest } from "./fixtures/raw-http.js";
import type { TestServer } from "./fixtures/servers.js";

// Only a CORS preflight (OPTIONS with both Origin and Access-Control-Request-Method) passes unauthenticated:
// an OPTIONS with one of the two is a request like any other, and an `app.all` handler would run for it.
describe.each(MOUNTED_ADAPTERS)("which OPTIONS is a preflight, %s", (adapter) => {
  let keys: TestKeys;
  let server: TestServer;
  beforeAll(async () => {
    keys = await testKeys();
    server = await startMounted(adapter, { algorithm: "HS256", verificationKeys: [keys.hsSecret] }, "/api");
  });
  afterAll(() => server.close());

  it("passes only both headers on; one of them alone, or none, must authenticate", async () => {
    const cases: [string, readonly string[], number][] = [
      ["both", ["Origin: https://ui.example", "Access-Control-Request-Method: DELETE"], 200],
      ["Origin alone", ["Origin: https://ui.example"], 401],
      [
        "Origin and Access-Control-Request-Headers",
        ["Origin: https://ui.example", "Access-Control-Request-Headers: authorization, dpop"],
        401,
      ],
      ["Access-Control-Request-Method alone", ["Access-Control-Request-Method: DELETE"], 401],
      ["neither", [], 401],
    ];
    for (const [name, lines, status] of cases) {
      const answer = await rawRequest(server.url, "OPTIONS", "/api/agents/a1", lines);
      expect(answer.status, name).toBe(status);
      if (status === 200)
        expect(JSON.parse(answer.body)).toEqual({ auth: expect.objectContaining({ authenticated: false }) });
    }
  });
});
