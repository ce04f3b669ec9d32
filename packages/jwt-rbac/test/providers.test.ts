import type { JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/verify/signature-types.js";
import { type OidcProvider, startProvider } from "./fixtures/oidc-provider.js";

/**
 * Access tokens shaped as the common identity providers document them (claims and issuer forms
 * written from their documentation), served by the stand-in provider at an issuer path of the same
 * shape, each with the README recipe's options.
 */
interface ProviderCase {
  readonly name: string;
  /** Issuer path on the stand-in, in the provider's own form. */
  readonly path: string;
  readonly claims: (issuer: string) => JWTPayload;
  readonly options: (issuer: string) => JwtRbacOptions;
  readonly expected: { userId: string; scopes: string[]; audience: string };
  /** A token of that provider but for another API: refused. */
  readonly otherAudience: (issuer: string) => JWTPayload;
}

const API = "https://api.example.com";
const CASES: readonly ProviderCase[] = [
  {
    // Auth0: iss ends in "/", aud is [API identifier, userinfo], azp is the client, scopes in `scope`.
    name: "Auth0",
    path: "/tenant/",
    claims: (issuer) => ({
      iss: issuer,
      sub: "auth0|64f1c2",
      aud: [API, `${issuer}userinfo`],
      azp: "xYz0ClientId",
      scope: "openid profile reports:read",
    }),
    options: (issuer) => ({ issuer, discovery: true, audience: API, scopesClaim: "scope" }),
    expected: { userId: "auth0|64f1c2", scopes: ["openid", "profile", "reports:read"], audience: API },
    otherAudience: (issuer) => ({ iss: issuer, sub: "auth0|1", aud: "https://other.example.com", scope: "" }),
  },
  {
    // Keycloak: iss is the realm URL, `scope` string, roles under realm_access, aud set by an audience mapper.
    name: "Keycloak",
    path: "/realms/acme",
    claims: (issuer) => ({
      iss: issuer,
      sub: "3f2c1d1e-5b8a-4c59-9c1e-2b7f0e8d4a11",
      aud: ["reports-api", "account"],
      azp: "web-app",
      typ: "Bearer",
      scope: "openid email reports:read",
      realm_access: { roles: ["offline_access", "reports-reader"] },
      preferred_username: "alice",
    }),
    options: (issuer) => ({ issuer, discovery: true, audience: "reports-api", scopesClaim: "scope" }),
    expected: {
      userId: "3f2c1d1e-5b8a-4c59-9c1e-2b7f0e8d4a11",
      scopes: ["openid", "email", "reports:read"],
      audience: "reports-api",
    },
    otherAudience: (issuer) => ({ iss: issuer, sub: "s", aud: "account", scope: "openid" }),
  },
  {
    // Entra ID v2 access token: iss .../{tid}/v2.0, aud is the API's client id, delegated scopes in `scp`,
    // app roles in `roles`, `oid` is the user's stable id across apps (`sub` is per app).
    name: "Entra ID v2",
    path: "/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
    claims: (issuer) => ({
      iss: issuer,
      aud: "6e74172b-be56-4843-9ff4-e66a39bb12e3",
      tid: "9188040d-6c67-4c5b-b112-36a304b66dad",
      oid: "00000000-0000-0000-66f3-3332eca7ea81",
      sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
      azp: "2d4d11a2-f814-46a7-890a-274a72a7309e",
      scp: "reports:read reports:write",
      roles: ["Reports.Admin"],
      ver: "2.0",
    }),
    options: (issuer) => ({
      issuer,
      discovery: true,
      audience: "6e74172b-be56-4843-9ff4-e66a39bb12e3",
      scopesClaim: "scp",
      userIdClaim: "oid",
    }),
    expected: {
      userId: "00000000-0000-0000-66f3-3332eca7ea81",
      scopes: ["reports:read", "reports:write"],
      audience: "6e74172b-be56-4843-9ff4-e66a39bb12e3",
    },
    otherAudience: (issuer) => ({
      iss: issuer,
      aud: "00000003-0000-0000-c000-000000000000",
      oid: "o",
      scp: "User.Read",
    }),
  },
  {
    // Cognito access token: no `aud`; the app client is `client_id`, scopes in `scope`, token_use "access".
    name: "Cognito",
    path: "/us-east-1_Ab12Cd34E",
    claims: (issuer) => ({
      iss: issuer,
      sub: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
      client_id: "1example23456789",
      token_use: "access",
      scope: "reports:read aws.cognito.signin.user.admin",
      username: "alice",
    }),
    options: (issuer) => ({
      issuer,
      discovery: true,
      audienceClaim: "client_id",
      audience: "1example23456789",
      scopesClaim: "scope",
    }),
    expected: {
      userId: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
      scopes: ["reports:read", "aws.cognito.signin.user.admin"],
      audience: "1example23456789",
    },
    otherAudience: (issuer) => ({
      iss: issuer,
      sub: "s",
      client_id: "another-client",
      scope: "reports:read",
    }),
  },
];

const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];

describe.each(CASES)("$name access token", (provider) => {
  let idp: OidcProvider;
  beforeAll(async () => {
    idp = await startProvider({ path: provider.path });
  });
  afterAll(async () => {
    await idp.close();
  });

  it.each(RUNTIMES)("gives the documented state with the recipe's options (%s)", async (_name, runtime) => {
    const auth = createJwtAuthOn(runtime, {
      ...provider.options(idp.issuer),
      defaultScopeMappings: false,
      excludedRoutePaths: [],
      scopeMappings: { "GET /reports/*": ["reports:read"], "POST /reports": ["reports:admin"] },
    });
    const token = await idp.sign(provider.claims(idp.issuer));
    const request = (method: string, path: string, bearer = token) =>
      auth.authenticate({ method, path, headers: { authorization: `Bearer ${bearer}` } });

    const result = await request("GET", "/reports/r1");
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.state).toMatchObject({ authenticated: true, ...provider.expected });
    const denied = await request("POST", "/reports");
    expect(denied.ok || denied.error.reason).toBe("insufficient_scope");
    const foreign = await request("GET", "/reports/r1", await idp.sign(provider.otherAudience(idp.issuer)));
    expect(foreign.ok || foreign.error.reason).toBe("invalid_audience");
  });
});
