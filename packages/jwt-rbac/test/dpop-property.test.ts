import fc from "fast-check";
import { base64url } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { ath, type DpopClient, dpopClient } from "./fixtures/dpop-client.js";

// Any change to a signed proof (a claim, a header member, a signature bit, any character) is refused
// by both builds, and a refused proof does not use up its jti: the untouched proof is accepted after.
// Then the same claims changed in proofs signed again by the client's key, so the signature holds and each
// claim's own check (htm, htu, iat, ath, nonce) is what must answer: removing any one of them fails here.

let as: AuthorizationServer;
let client: DpopClient;
let token: string;
beforeAll(async () => {
  as = await startAuthorizationServer();
  client = await dpopClient("ES256");
  ({ access_token: token } = await as.issue({
    dpop: await client.proof({ method: "POST", url: as.tokenUrl }),
  }));
});
afterAll(async () => {
  await as.close();
});

const URL_ = "https://api.example/v1/agents";
const encode = (value: unknown) => base64url.encode(new TextEncoder().encode(JSON.stringify(value)));
const decode = (part: string) =>
  JSON.parse(new TextDecoder().decode(base64url.decode(part))) as Record<string, unknown>;

type Mutation =
  | { kind: "claim"; name: string; value: unknown }
  | { kind: "header"; name: string; value: unknown }
  | { kind: "signature"; bit: number }
  | { kind: "char"; at: number; char: string };

const json = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant("claim" as const),
    name: fc.constantFrom("htm", "htu", "iat", "jti", "ath", "nonce", "extra"),
    value: json,
  }),
  fc.record({
    kind: fc.constant("header" as const),
    name: fc.constantFrom("typ", "alg", "jwk", "crit", "kid", "jku", "x5c"),
    value: json,
  }),
  fc.record({ kind: fc.constant("signature" as const), bit: fc.nat(511) }),
  fc.record({
    kind: fc.constant("char" as const),
    at: fc.nat(),
    char: fc.string({ minLength: 1, maxLength: 1 }),
  }),
);

function mutate(proof: string, change: Mutation): string {
  const [h, p, s] = proof.split(".") as [string, string, string];
  switch (change.kind) {
    case "claim":
      return `${h}.${encode({ ...decode(p), [change.name]: change.value })}.${s}`;
    case "header":
      return `${encode({ ...decode(h), [change.name]: change.value })}.${p}.${s}`;
    case "signature": {
      const bytes = base64url.decode(s);
      const i = change.bit >> 3;
      if (i < bytes.length) bytes[i] = (bytes[i] as number) ^ (1 << (change.bit & 7));
      return `${h}.${p}.${base64url.encode(bytes)}`;
    }
    case "char": {
      const at = change.at % proof.length;
      return proof.slice(0, at) + change.char + proof.slice(at + 1);
    }
  }
}

describe.each([
  ["webcrypto", webRuntime],
  ["node:crypto", nodeRuntime],
])("mutated DPoP proofs, %s build", (_name, runtime) => {
  it("refuses every mutation and keeps the original usable", async () => {
    const auth = createJwtAuthOn(runtime, {
      algorithm: "ES256",
      issuer: as.issuer,
      jwksUrl: as.jwksUrl,
      publicOrigin: "https://api.example",
      dpop: { required: true },
    });
    const ask = (proof: string) =>
      auth.authenticate({
        method: "GET",
        path: "/v1/agents",
        url: URL_,
        headers: { authorization: `DPoP ${token}`, dpop: proof },
      });
    await fc.assert(
      fc.asyncProperty(mutation, async (change) => {
        const proof = await client.proof({ method: "GET", url: URL_, accessToken: token });
        const mutated = mutate(proof, change);
        fc.pre(mutated !== proof);
        const refused = await ask(mutated);
        expect(refused.ok).toBe(false);
        if (!refused.ok) expect(refused.error.status).toBe(401);
        const accepted = await ask(proof);
        expect(accepted.ok).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

const ORIGIN_ = "https://api.example";
/** `htu` values naming URL_ (RFC 9449 §4.3 comparison: case, default port, query, fragment, escapes, dot segments). */
const SAME_URL = [
  "https://API.EXAMPLE/v1/agents",
  "https://api.example:443/v1/agents",
  "https://api.example/v1/agents?x=1",
  "https://api.example/v1/agents#f",
  "https://api.example/v1/%61gents",
  "https://api.example/v1/./agents",
];
/** Near misses: each names another URL. */
const OTHER_URL = [
  "https://api.example/v1/agents/",
  "http://api.example/v1/agents",
  "https://api.example:8443/v1/agents",
  "https://api.example.evil/v1/agents",
  "https://evil.example/v1/agents",
  "https://user@api.example/v1/agents",
  "https://api.example/v1/Agents",
  "https://api.example/v1/agents2",
  "https://api.example/v1",
  "https://api.example/V1/agents",
  "/v1/agents",
  "api.example/v1/agents",
];

describe.each([
  ["webcrypto", webRuntime],
  ["node:crypto", nodeRuntime],
])("claims changed in re-signed DPoP proofs, %s build", (_name, runtime) => {
  it("answers each by its own check: the claim's value decides, never the signature", async () => {
    const auth = createJwtAuthOn(runtime, {
      algorithm: "ES256",
      issuer: as.issuer,
      jwksUrl: as.jwksUrl,
      publicOrigin: ORIGIN_,
      dpop: { required: true, nonce: { rotateMs: 3_600_000 } },
    });
    const ask = (proof: string) =>
      auth.authenticate({
        method: "GET",
        path: "/v1/agents",
        url: "/v1/agents",
        headers: { authorization: `DPoP ${token}`, dpop: proof },
      });
    const first = await ask(await client.proof({ method: "GET", url: URL_, accessToken: token }));
    expect(first.ok).toBe(false);
    const nonce = first.ok ? "" : (first.error.headers["DPoP-Nonce"] as string);
    expect(nonce).toMatch(/\./);
    const realAth = await ath(token);
    const nowS = () => Math.floor(Date.now() / 1000);
    // The checks' words in the refusal: the claim's own check answered.
    const WORD: Record<string, RegExp> = {
      htm: /htm does not match/,
      htu: /htu does not match/,
      iat: /iat|too old/,
      ath: /ath does not match/,
      nonce: /nonce/,
    };
    const claimChange = fc.oneof(
      fc.record({
        name: fc.constant("htm"),
        value: fc.oneof(json, fc.constantFrom("get", "POST", "GET ", "HEAD")),
      }),
      fc.record({
        name: fc.constant("htu"),
        value: fc.oneof(json, fc.constantFrom(...SAME_URL, ...OTHER_URL)),
      }),
      fc.record({
        name: fc.constant("iat"),
        value: fc.oneof(
          json,
          fc.integer({ min: -200, max: 200 }).map((offset) => ({ offset })),
        ),
      }),
      fc.record({
        name: fc.constant("ath"),
        value: fc.oneof(json, fc.constantFrom(realAth.slice(1), `${realAth}=`, realAth.toLowerCase())),
      }),
      fc.record({
        name: fc.constant("nonce"),
        value: fc.oneof(json, fc.constantFrom(nonce.slice(1), `${nonce}x`, nonce.toUpperCase(), "")),
      }),
    );
    await fc.assert(
      fc.asyncProperty(claimChange, async ({ name, value: raw }) => {
        const now = nowS();
        const value =
          typeof raw === "object" && raw !== null && "offset" in raw ? now + (raw.offset as number) : raw;
        // Whether the claim still names this request (the oracle, written apart from the code under test).
        let fits: boolean;
        switch (name) {
          case "htm":
            fits = value === "GET";
            break;
          case "htu":
            fits = typeof value === "string" && SAME_URL.includes(value);
            break;
          case "iat": {
            // Window: 60 s old to 5 s ahead; a second's margin either side, so the clock cannot decide.
            if (typeof value === "number" && Math.abs(value - (now - 65)) <= 1) return;
            if (typeof value === "number" && Math.abs(value - (now + 5)) <= 1) return;
            fits = typeof value === "number" && value >= now - 65 && value <= now + 5;
            break;
          }
          case "ath":
            fits = value === realAth;
            break;
          default:
            fits = value === nonce;
        }
        const proof = await client.proof({
          method: "GET",
          url: URL_,
          accessToken: token,
          nonce,
          claims: { [name]: value },
        });
        const answer = await ask(proof);
        expect(answer.ok, `${name}: ${JSON.stringify(value)}`).toBe(fits);
        if (!answer.ok) {
          expect(answer.error.status).toBe(401);
          expect(answer.error.detail, `${name}: ${JSON.stringify(value)}`).toMatch(WORD[name] as RegExp);
        }
      }),
      { numRuns: 300 },
    );
    // Every check's near miss, once each, whatever the generator drew.
    for (const url of OTHER_URL) {
      const proof = await client.proof({ method: "GET", url, accessToken: token, nonce });
      const answer = await ask(proof);
      expect(answer.ok, url).toBe(false);
    }
  });
});
