import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from "../../../packages/jwt-rbac/test/fixtures/authorization-server.js";
import { type DpopClient, dpopClient } from "../../../packages/jwt-rbac/test/fixtures/dpop-client.js";
import { startTestServer, type TestServer } from "./helpers.js";

const PUBLIC_URL = "https://api.example.test";

/**
 * A TLS-terminating proxy as deployed, on loopback: the client calls `https://api.example.test/...` (here: plain
 * HTTP to this server, which stands for the TLS side) and the proxy forwards each request to the platform as plain
 * HTTP, with the Host of the upstream and the usual X-Forwarded-* headers.
 */
async function startProxy(upstreamPort: number): Promise<{ url: string; server: Server }> {
  const server = createServer((incoming, outgoing) => {
    const upstream = httpRequest(
      {
        host: "127.0.0.1",
        port: upstreamPort,
        method: incoming.method,
        path: incoming.url,
        headers: {
          ...incoming.headers,
          host: `127.0.0.1:${upstreamPort}`,
          "x-forwarded-proto": "https",
          "x-forwarded-host": "api.example.test",
        },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

// DPoP behind a proxy: PUBLIC_URL is the origin proofs name; the URL the server sees inside never is.
describe("DPoP on the reference server behind a TLS-terminating proxy (PUBLIC_URL)", () => {
  let as: AuthorizationServer;
  let server: TestServer;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let client: DpopClient;
  let token: string;
  beforeAll(async () => {
    as = await startAuthorizationServer();
    server = await startTestServer({
      env: {
        JWT_VERIFICATION_KEY: "",
        JWT_ALGORITHM: "ES256",
        JWT_ISSUER: as.issuer,
        JWT_JWKS_URL: as.jwksUrl,
        JWT_DPOP: "required",
        PUBLIC_URL,
      },
    });
    proxy = await startProxy(server.port);
    client = await dpopClient("ES256");
    ({ access_token: token } = await as.issue({
      dpop: await client.proof({ method: "POST", url: as.tokenUrl }),
      claims: { scopes: ["config:read"] },
    }));
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy?.server.close(resolve));
    await server?.cleanup();
    await as?.close();
  });

  const PATH = "/databases/default/migrations";
  async function call(proofUrl: string, via: string): Promise<{ status: number; challenge: string | null }> {
    const proof = await client.proof({ method: "GET", url: proofUrl, accessToken: token });
    const response = await fetch(`${via}${PATH}?page=1`, {
      headers: { authorization: `DPoP ${token}`, dpop: proof },
    });
    await response.arrayBuffer();
    return { status: response.status, challenge: response.headers.get("www-authenticate") };
  }

  it("accepts the proof naming the public URL, through the proxy", async () => {
    expect((await call(`${PUBLIC_URL}${PATH}`, proxy.url)).status).toBe(200);
    // Case and the default port are the same URL (RFC 9449 §4.3).
    expect((await call(`https://API.example.test:443${PATH}`, proxy.url)).status).toBe(200);
  });

  it("refuses a proof naming the internal URL, another scheme, host or path", async () => {
    const internal = `http://127.0.0.1:${server.port}`;
    for (const proofUrl of [
      `${internal}${PATH}`,
      `http://api.example.test${PATH}`,
      `https://api.example.test:8443${PATH}`,
      `https://other.example.test${PATH}`,
      `${PUBLIC_URL}/databases/other/migrations`,
    ]) {
      const answer = await call(proofUrl, proxy.url);
      expect(answer.status, proofUrl).toBe(401);
      expect(answer.challenge, proofUrl).toContain("htu does not match the request URL");
    }
    // Straight to the server, bypassing the proxy: still the public URL, never the one called.
    expect((await call(`${internal}${PATH}`, internal)).status).toBe(401);
    expect((await call(`${PUBLIC_URL}${PATH}`, internal)).status).toBe(200);
  });
});
