import fc from "fast-check";
import { base64url } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { type DpopClient, dpopClient } from "./fixtures/dpop-client.js";

// Any change to a signed proof (a claim, a header member, a signature bit, any character) is refused
// by both builds, and a refused proof does not use up its jti: the untouched proof is accepted after.

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
