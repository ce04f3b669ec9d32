import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JwtRbacOptions } from "../src/index.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { type DpopClient, dpopClient } from "./fixtures/dpop-client.js";
import { MOUNTED_ADAPTERS, startMounted } from "./fixtures/mounted.js";
import type { TestServer } from "./fixtures/servers.js";

// RFC 9449 over real HTTP: a stand-in authorization server binds tokens to the stand-in client's key;
// every adapter (and the WebCrypto build through the Fetch adapter) holds each request to its proof.

let as: AuthorizationServer;
const clients: Record<string, DpopClient> = {};
beforeAll(async () => {
  as = await startAuthorizationServer();
  for (const alg of ["ES256", "EdDSA", "RS256"] as const) clients[alg] = await dpopClient(alg);
  clients.impostor = await dpopClient("ES256");
});
afterAll(async () => {
  await as.close();
});

const ALGS = "ES256 ES384 ES512 EdDSA RS256 PS256";
const base = (dpop: JwtRbacOptions["dpop"] = {}): JwtRbacOptions => ({
  algorithm: "ES256",
  issuer: as.issuer,
  jwksUrl: as.jwksUrl,
  dpop,
});

/** A token from the authorization server's token endpoint, bound to `client` when given. */
async function tokenFor(client?: DpopClient): Promise<string> {
  const headers: Record<string, string> = {};
  if (client !== undefined) headers.dpop = await client.proof({ method: "POST", url: as.tokenUrl });
  const response = await fetch(as.tokenUrl, { method: "POST", headers });
  const body = (await response.json()) as { access_token: string; token_type: string };
  expect(body.token_type).toBe(client === undefined ? "Bearer" : "DPoP");
  return body.access_token;
}

interface Answer {
  status: number;
  challenge: string | null;
  nonce: string | null;
  body: Record<string, unknown>;
}

async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string> },
): Promise<Answer> {
  const response = await fetch(url, { method: init.method ?? "GET", headers: init.headers ?? {} });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
    nonce: response.headers.get("dpop-nonce"),
    body: text === "" ? {} : JSON.parse(text),
  };
}

const proofChallenge = (detail: string) =>
  `DPoP realm="platform", algs="${ALGS}", error="invalid_dpop_proof", error_description="Invalid DPoP proof: ${detail}"`;

describe.each(MOUNTED_ADAPTERS)("DPoP over HTTP, %s", (adapter) => {
  let server: TestServer;
  let required: TestServer;
  const prefix = "/api/v1";
  beforeAll(async () => {
    server = await startMounted(adapter, base(), prefix);
    required = await startMounted(adapter, base({ required: true }), prefix);
  });
  afterAll(async () => {
    await Promise.all([server.close(), required.close()]);
  });

  it.each(["ES256", "EdDSA", "RS256"])(
    "accepts a bound token with its %s proof once, on the URL with its mount prefix",
    async (alg) => {
      const client = clients[alg] as DpopClient;
      const token = await tokenFor(client);
      const url = `${server.url}${prefix}/agents/a1`;
      // The query is not part of htu (RFC 9449 §4.3).
      const proof = await client.proof({ method: "POST", url, accessToken: token });
      const ok = await call(`${url}?page=2`, {
        method: "POST",
        headers: { authorization: `DPoP ${token}`, dpop: proof },
      });
      expect(ok.status).toBe(200);
      expect((ok.body.auth as { confirmation: unknown }).confirmation).toEqual({ jkt: client.jkt });
      // The same proof again: a replay.
      const again = await call(url, {
        method: "POST",
        headers: { authorization: `DPoP ${token}`, dpop: proof },
      });
      expect(again.status).toBe(401);
      expect(again.challenge).toBe(proofChallenge("proof already used (replayed jti)"));
      expect(again.body).toEqual({
        detail: "Invalid DPoP proof: proof already used (replayed jti)",
        error_code: "UNAUTHENTICATED",
      });
      // A fresh proof with the cached token: accepted.
      const fresh = await client.proof({ method: "POST", url, accessToken: token });
      expect(
        (await call(url, { method: "POST", headers: { authorization: `DPoP ${token}`, dpop: fresh } }))
          .status,
      ).toBe(200);
    },
  );

  it("refuses each proof that does not fit the request, with its exact 401", async () => {
    const client = clients.ES256 as DpopClient;
    const other = clients.EdDSA as DpopClient;
    const token = await tokenFor(client);
    const url = `${server.url}${prefix}/agents`;
    const cases: [string, () => Promise<string | undefined>, string][] = [
      ["no proof", async () => undefined, "DPoP header missing"],
      [
        "another method",
        () => client.proof({ method: "POST", url, accessToken: token }),
        "htm does not match the request method",
      ],
      [
        "lower-case method",
        () => client.proof({ method: "get", url, accessToken: token }),
        "htm does not match the request method",
      ],
      [
        "without the mount prefix",
        () => client.proof({ method: "GET", url: `${server.url}/agents`, accessToken: token }),
        "htu does not match the request URL",
      ],
      [
        "another host",
        () => client.proof({ method: "GET", url: url.replace("127.0.0.1", "localhost"), accessToken: token }),
        "htu does not match the request URL",
      ],
      [
        "https for http",
        () => client.proof({ method: "GET", url: url.replace("http:", "https:"), accessToken: token }),
        "htu does not match the request URL",
      ],
      [
        "credentials in htu",
        () => client.proof({ method: "GET", url: url.replace("http://", "http://u:p@"), accessToken: token }),
        "htu does not match the request URL",
      ],
      ["no ath", () => client.proof({ method: "GET", url }), "ath does not match the access token"],
      [
        "ath of another token",
        () => client.proof({ method: "GET", url, accessToken: `${token}x` }),
        "ath does not match the access token",
      ],
      [
        "too old",
        () =>
          client.proof({
            method: "GET",
            url,
            accessToken: token,
            claims: { iat: Math.floor(Date.now() / 1000) - 120 },
          }),
        "proof too old",
      ],
      [
        "from the future",
        () =>
          client.proof({
            method: "GET",
            url,
            accessToken: token,
            claims: { iat: Math.floor(Date.now() / 1000) + 60 },
          }),
        "iat is in the future",
      ],
      [
        "iat a string",
        () => client.proof({ method: "GET", url, accessToken: token, claims: { iat: "now" } }),
        "iat missing",
      ],
      [
        "no jti",
        () => client.proof({ method: "GET", url, accessToken: token, claims: { jti: undefined } }),
        "jti missing or longer than 256 characters",
      ],
      [
        "huge jti",
        () => client.proof({ method: "GET", url, accessToken: token, claims: { jti: "j".repeat(257) } }),
        "jti missing or longer than 256 characters",
      ],
      [
        "typ JWT",
        () => client.proof({ method: "GET", url, accessToken: token, header: { typ: "JWT" } }),
        "typ is not dpop+jwt",
      ],
      [
        "no typ",
        () => client.proof({ method: "GET", url, accessToken: token, header: { typ: undefined } }),
        "typ is not dpop+jwt",
      ],
      [
        "private key in jwk",
        () => client.proof({ method: "GET", url, accessToken: token, header: { jwk: client.privateJwk } }),
        "the jwk header holds a private or secret key",
      ],
      [
        "no jwk",
        () => client.proof({ method: "GET", url, accessToken: token, header: { jwk: undefined } }),
        "no jwk header",
      ],
      [
        "another client's key",
        () => other.proof({ method: "GET", url, accessToken: token }),
        "the proof's key is not the one the token is bound to",
      ],
      [
        "the right key named, another one signing",
        () =>
          other.proof({
            method: "GET",
            url,
            accessToken: token,
            header: { alg: "EdDSA", jwk: client.publicJwk },
          }),
        "the jwk header's key type does not fit the algorithm",
      ],
      [
        "the right key named, an impostor's signing",
        () =>
          (clients.impostor as DpopClient).proof({
            method: "GET",
            url,
            accessToken: token,
            header: { jwk: client.publicJwk },
          }),
        "signature verification failed",
      ],
      ["not a JWS", async () => "not-a-proof", "not a compact JWS"],
    ];
    for (const [name, make, detail] of cases) {
      const proof = await make();
      const headers: Record<string, string> = { authorization: `DPoP ${token}` };
      if (proof !== undefined) headers.dpop = proof;
      const answer = await call(url, { headers });
      expect([name, answer.status, answer.challenge]).toEqual([name, 401, proofChallenge(detail)]);
    }
    // Two DPoP headers (RFC 9449 §4.3: exactly one), sent as two raw header lines, each valid alone.
    const [first, second] = [
      await client.proof({ method: "GET", url, accessToken: token }),
      await client.proof({ method: "GET", url, accessToken: token }),
    ];
    const target = new URL(url);
    const status = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(target.port), target.hostname, () => {
        socket.end(
          `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nAuthorization: DPoP ${token}\r\nDPoP: ${first}\r\nDPoP: ${second}\r\nConnection: close\r\n\r\n`,
        );
      });
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      socket.on("end", () => resolve(`${text.slice(9, 12)} ${text.slice(text.indexOf("\r\n\r\n") + 4)}`));
      socket.on("error", reject);
    });
    expect(status).toBe(
      '401 {"detail":"Invalid DPoP proof: not a compact JWS","error_code":"UNAUTHENTICATED"}',
    );
  });

  it("refuses the downgrades: a bound token as Bearer, an unbound token as DPoP", async () => {
    const client = clients.ES256 as DpopClient;
    const bound = await tokenFor(client);
    const unbound = await tokenFor();
    const url = `${server.url}${prefix}/agents`;
    const asBearer = await call(url, { headers: { authorization: `Bearer ${bound}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.challenge).toBe(
      `Bearer realm="platform", error="invalid_token", error_description="Invalid token: a DPoP-bound token must be presented with the DPoP scheme and its proof"`,
    );
    // Even with a valid proof alongside.
    const withProof = await call(url, {
      headers: {
        authorization: `Bearer ${bound}`,
        dpop: await client.proof({ method: "GET", url, accessToken: bound }),
      },
    });
    expect(withProof.status).toBe(401);
    const unboundAsDpop = await call(url, {
      headers: {
        authorization: `DPoP ${unbound}`,
        dpop: await client.proof({ method: "GET", url, accessToken: unbound }),
      },
    });
    expect(unboundAsDpop.status).toBe(401);
    expect(unboundAsDpop.challenge).toBe(
      `DPoP realm="platform", algs="${ALGS}", error="invalid_token", error_description="Invalid token: the token is not DPoP-bound; present it as Bearer"`,
    );
    // required: false takes a plain bearer token.
    expect((await call(url, { headers: { authorization: `Bearer ${unbound}` } })).status).toBe(200);
    // No token at all: both schemes offered.
    const none = await call(url, {});
    expect(none.challenge).toBe(`Bearer realm="platform", DPoP realm="platform", algs="${ALGS}"`);
  });

  it("required: true refuses every bearer token, bound or not, in the DPoP scheme", async () => {
    const client = clients.ES256 as DpopClient;
    const unbound = await tokenFor();
    const bound = await tokenFor(client);
    const url = `${required.url}${prefix}/agents`;
    const plain = await call(url, { headers: { authorization: `Bearer ${unbound}` } });
    expect(plain.status).toBe(401);
    expect(plain.challenge).toBe(
      `DPoP realm="platform", algs="${ALGS}", error="invalid_token", error_description="Invalid token: DPoP is required: present a DPoP-bound token with the DPoP scheme"`,
    );
    expect((await call(url, { headers: { authorization: `Bearer ${bound}` } })).status).toBe(401);
    expect((await call(url, {})).challenge).toBe(`DPoP realm="platform", algs="${ALGS}"`);
    const proof = await client.proof({ method: "GET", url, accessToken: bound });
    expect((await call(url, { headers: { authorization: `DPoP ${bound}`, dpop: proof } })).status).toBe(200);
    // A bad token under DPoP: the token's own failure, in the DPoP scheme.
    const forged = `${bound.slice(0, -4)}AAAA`;
    const bad = await call(url, {
      headers: {
        authorization: `DPoP ${forged}`,
        dpop: await client.proof({ method: "GET", url, accessToken: forged }),
      },
    });
    expect(bad.challenge).toBe(
      `DPoP realm="platform", algs="${ALGS}", error="invalid_token", error_description="Invalid token: signature verification failed"`,
    );
  });
});

describe.each(MOUNTED_ADAPTERS)("DPoP server nonces, %s", (adapter) => {
  it("asks for the nonce, accepts it, offers it on success; replicas with one secret agree", async () => {
    const secret = "a-nonce-secret-shared-by-every-replica-0123456789";
    const [a, b] = await Promise.all([
      startMounted(adapter, base({ nonce: { secret } })),
      startMounted(adapter, base({ nonce: { secret } })),
    ]);
    const stranger = await startMounted(adapter, base({ nonce: { secret: `${secret}-other` } }));
    try {
      const client = clients.EdDSA as DpopClient;
      const token = await tokenFor(client);
      const first = await call(`${a.url}/x`, {
        headers: {
          authorization: `DPoP ${token}`,
          dpop: await client.proof({ method: "GET", url: `${a.url}/x`, accessToken: token }),
        },
      });
      expect(first.status).toBe(401);
      expect(first.challenge).toBe(
        `DPoP realm="platform", algs="${ALGS}", error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`,
      );
      const nonce = first.nonce as string;
      expect(nonce).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
      // The nonce from a is good at b (stateless, same secret) and offered again on success.
      const atB = await call(`${b.url}/x`, {
        headers: {
          authorization: `DPoP ${token}`,
          dpop: await client.proof({ method: "GET", url: `${b.url}/x`, accessToken: token, nonce }),
        },
      });
      expect(atB.status).toBe(200);
      expect(atB.nonce).toBe(nonce);
      // Another secret: not its nonce.
      const atStranger = await call(`${stranger.url}/x`, {
        headers: {
          authorization: `DPoP ${token}`,
          dpop: await client.proof({ method: "GET", url: `${stranger.url}/x`, accessToken: token, nonce }),
        },
      });
      expect([atStranger.status, atStranger.body.detail]).toEqual([
        401,
        "Resource server requires nonce in DPoP proof",
      ]);
      expect(atStranger.nonce).not.toBe(nonce);
      // Every 401 offers the nonce, a token failure too.
      expect((await call(`${a.url}/x`, { headers: { authorization: "DPoP nope" } })).nonce).toBe(nonce);
      for (const forged of [`${nonce}x`, nonce.toUpperCase(), "", 7]) {
        const answer = await call(`${a.url}/x`, {
          headers: {
            authorization: `DPoP ${token}`,
            dpop: await client.proof({
              method: "GET",
              url: `${a.url}/x`,
              accessToken: token,
              claims: { nonce: forged },
            }),
          },
        });
        expect(answer.status).toBe(401);
      }
    } finally {
      await Promise.all([a.close(), b.close(), stranger.close()]);
    }
  });
});

it("refuses bound tokens outright without the dpop option", async () => {
  const { dpop: _, ...plain } = base();
  const server = await startMounted("hono", plain);
  try {
    const client = clients.ES256 as DpopClient;
    const bound = await tokenFor(client);
    const answer = await call(`${server.url}/x`, { headers: { authorization: `Bearer ${bound}` } });
    expect(answer.status).toBe(401);
    expect(answer.challenge).toBe(
      `Bearer realm="platform", error="invalid_token", error_description="Invalid token: a DPoP-bound token must be presented with the DPoP scheme and its proof"`,
    );
  } finally {
    await server.close();
  }
});
