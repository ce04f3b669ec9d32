import { beforeAll, describe, expect, it } from "vitest";
import { authenticateRequest, withJwtRbac } from "../src/fetch/index.js";
import { createJwtAuth } from "../src/index.js";
import { sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { serveFetchApp } from "./fixtures/servers.js";

let keys: TestKeys;
beforeAll(async () => {
  keys = await testKeys();
});

describe("Fetch adapter specifics", () => {
  it("authenticateRequest gives the state or the error Response", async () => {
    const auth = createJwtAuth({ algorithm: "HS256", verificationKeys: [keys.hsSecret] });
    const server = await serveFetchApp(async (request) => {
      const state = await authenticateRequest(request, auth);
      return state instanceof Response ? state : Response.json({ user: state.userId });
    });
    try {
      const token = await sign({ sub: "u1" }, "HS256", keys.hsSecret);
      const ok = await fetch(`${server.url}/x?y=1`, { headers: { authorization: `Bearer ${token}` } });
      expect(await ok.json()).toEqual({ user: "u1" });
      const refused = await fetch(`${server.url}/x`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="platform"');
    } finally {
      await server.close();
    }
  });

  it("withJwtRbac passes extra arguments (env, ctx) through after the state", async () => {
    const handler = withJwtRbac<{ sub: string }, [env: { name: string }]>(
      (_request, auth, env) => Response.json({ user: auth.userId, env: env.name }),
      { algorithm: "HS256", verificationKeys: [keys.hsSecret] },
    );
    const token = await sign({ sub: "u2" }, "HS256", keys.hsSecret);
    const response = await handler(
      new Request("http://worker.test/x", { headers: { authorization: `Bearer ${token}` } }),
      {
        name: "prod",
      },
    );
    expect(await response.json()).toEqual({ user: "u2", env: "prod" });
  });
});
