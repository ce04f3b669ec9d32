import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from "../../../packages/jwt-rbac/test/fixtures/authorization-server.js";
import { dpopClient } from "../../../packages/jwt-rbac/test/fixtures/dpop-client.js";
import { loadConfig } from "../src/config.js";
import { TEST_DATABASE_URL } from "./databases.js";
import { request, startTestServer, type TestServer } from "./helpers.js";

// The platform's service accounts (PLATFORM_SERVICE_TOKENS: sha256 hashes and scopes) through
// jwt-rbac's tokenVerifier, and DPoP (JWT_DPOP) with proofs remembered in the shared PostgreSQL.

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("service accounts (PLATFORM_SERVICE_TOKENS)", () => {
  const ci = randomBytes(32).toString("base64url");
  const reader = randomBytes(32).toString("base64url");
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        PLATFORM_SERVICE_TOKENS: JSON.stringify([
          { name: "ci", sha256: sha256(ci), scopes: ["config:read", "config:write"] },
          { name: "reader", sha256: sha256(reader), scopes: ["config:read"] },
        ]),
      },
    });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("grants each token its account's scopes, and nothing to unknown tokens", async () => {
    const read = await request(server, "GET", "/databases/default/migrations", reader);
    expect(read.status).toBe(200);
    const write = await request(server, "POST", "/databases/default/migrate", reader);
    expect(write.status).toBe(403);
    expect((await request(server, "GET", "/databases/default/migrations", ci)).status).toBe(200);
    const unknown = await request(
      server,
      "GET",
      "/databases/default/migrations",
      randomBytes(32).toString("base64url"),
    );
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({
      detail: "Invalid token: the token is not active",
      error_code: "UNAUTHENTICATED",
    });
    // The hash itself is not a token.
    expect((await request(server, "GET", "/databases/default/migrations", sha256(ci))).status).toBe(401);
    // Nothing of a token reaches the log.
    expect(server.logs.join("\n")).not.toContain(ci);
  });

  it.each([
    ["not JSON", "ci=abc"],
    ["a short hash", JSON.stringify([{ name: "ci", sha256: "abc", scopes: [] }])],
    [
      "an extra member (a token in clear?)",
      JSON.stringify([{ name: "ci", sha256: sha256("x"), scopes: [], token: "x" }]),
    ],
    [
      "a repeated hash",
      JSON.stringify([
        { name: "a", sha256: sha256("x"), scopes: [] },
        { name: "b", sha256: sha256("x"), scopes: [] },
      ]),
    ],
  ])("refuses %s with a line naming the variable", (_name, value) => {
    expect(() => loadConfig({ PLATFORM_SERVICE_TOKENS: value })).toThrow(/PLATFORM_SERVICE_TOKENS/);
  });
});

describe.skipIf(TEST_DATABASE_URL === undefined)(
  "DPoP on the reference server, proofs remembered in PostgreSQL",
  () => {
    let as: AuthorizationServer;
    let server: TestServer;
    beforeAll(async () => {
      as = await startAuthorizationServer();
      server = await startTestServer({
        backend: "postgres",
        env: {
          JWT_VERIFICATION_KEY: "",
          JWT_ALGORITHM: "ES256",
          JWT_ISSUER: as.issuer,
          JWT_JWKS_URL: as.jwksUrl,
          JWT_DPOP: "required",
        },
      });
    });
    afterAll(async () => {
      await server?.cleanup();
      await as?.close();
    });

    it("accepts a bound token with its proof once, and refuses it as Bearer", async () => {
      const client = await dpopClient("ES256");
      const { access_token: token } = await as.issue({
        dpop: await client.proof({ method: "POST", url: as.tokenUrl }),
        claims: { scopes: ["config:read"] },
      });
      const url = `${server.url}/databases/default/migrations`;
      const proof = await client.proof({ method: "GET", url, accessToken: token });
      const send = () => fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
      expect((await send()).status).toBe(200);
      const replay = await send();
      expect(replay.status).toBe(401);
      expect(await replay.json()).toEqual({
        detail: "Invalid DPoP proof: proof already used (replayed jti)",
        error_code: "UNAUTHENTICATED",
      });
      expect((await request(server, "GET", "/databases/default/migrations", token)).status).toBe(401);
    });
  },
);
