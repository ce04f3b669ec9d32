import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The stand-in OpenID provider of the jwt-rbac tests: one implementation for both suites.
import { type OidcProvider, startProvider } from "../../../packages/jwt-rbac/test/fixtures/oidc-provider.js";
import { request, startTestServer, type TestServer } from "./helpers.js";

const PUBLIC_URL = "https://platform.example.com";
const METADATA = `${PUBLIC_URL}/.well-known/oauth-protected-resource`;

describe("the server behind an identity provider (JWT_ISSUER, JWT_JWKS_URL, JWT_AUDIENCE, claim names)", () => {
  let idp: OidcProvider;
  let server: TestServer;
  beforeAll(async () => {
    idp = await startProvider({ realm: "platform" });
    server = await startTestServer({
      env: {
        JWT_VERIFICATION_KEY: "",
        JWT_ALGORITHM: "RS256",
        JWT_ISSUER: idp.issuer,
        JWT_JWKS_URL: idp.jwksUrl,
        JWT_AUDIENCE: "agent-platform-api",
        JWT_SCOPES_CLAIM: "scope",
        JWT_USER_ID_CLAIM: "oid",
        PUBLIC_URL,
      },
    });
  });
  afterAll(async () => {
    await server?.cleanup();
    await idp?.close();
  });

  const token = (claims: Record<string, unknown>) =>
    idp.sign({ oid: "user-1", aud: "agent-platform-api", scope: "openid config:read", ...claims });

  it("accepts the provider's tokens with an OAuth scope string, fetching the JWKS once", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await request(server, "GET", "/databases/default/migrations", await token({}))).status).toBe(
        200,
      );
    }
    const forbidden = await request(server, "POST", "/databases/default/migrate", await token({}));
    expect(forbidden.status).toBe(403);
    expect(idp.count("jwks")).toBe(1);
  });

  it("refuses another issuer's or another audience's token, the first before any fetch", async () => {
    const before = idp.count("jwks");
    const foreign = await request(
      server,
      "GET",
      "/databases/default/migrations",
      await token({ iss: "https://evil.example" }),
    );
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get("www-authenticate")).toContain(
      'error_description="Invalid token: unexpected issuer"',
    );
    expect(idp.count("jwks")).toBe(before);
    const otherApi = await request(
      server,
      "GET",
      "/databases/default/migrations",
      await token({ aud: "other-api" }),
    );
    expect(otherApi.body).toEqual({ detail: "Invalid token audience", error_code: "UNAUTHENTICATED" });
  });

  it("announces its RFC 9728 metadata in every challenge and serves it without a token", async () => {
    const missing = await request(server, "GET", "/databases/default/migrations");
    expect(missing.headers.get("www-authenticate")).toBe(
      `Bearer realm="platform", resource_metadata="${METADATA}"`,
    );
    const forbidden = await request(server, "POST", "/databases/default/migrate", await token({}));
    expect(forbidden.headers.get("www-authenticate")).toContain(`resource_metadata="${METADATA}"`);

    const metadata = await request(server, "GET", "/.well-known/oauth-protected-resource");
    expect(metadata.status).toBe(200);
    expect(metadata.body).toMatchObject({
      resource: PUBLIC_URL,
      authorization_servers: [idp.issuer],
      bearer_methods_supported: ["header"],
    });
    const scopes = (metadata.body as { scopes_supported: string[] }).scopes_supported;
    expect(scopes).toEqual(
      expect.arrayContaining(["config:read", "config:write", "agents:read", "platform:admin"]),
    );
  });
});
