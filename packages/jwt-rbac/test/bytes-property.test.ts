import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuthResult, createJwtAuthOn, type JwtAuth } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { hsOverBytes } from "./fixtures/hostile-tokens.js";
import { NOW_S, type TestKeys, testKeys } from "./fixtures/keys.js";

// One rule for a token's bytes in both builds: whatever the header and payload bytes (validly signed, so the
// decision rests on decoding alone), the node:crypto build and the WebCrypto build decide alike, and
// `authenticate()` resolves for every input up to a `maxTokenLength` of 4 MB: it never rejects or throws.

const MAX = 4 * 1024 * 1024;
let keys: TestKeys;
let node: JwtAuth;
let web: JwtAuth;

beforeAll(async () => {
  keys = await testKeys();
  const options: JwtRbacOptions = {
    algorithm: "HS256",
    verificationKeys: [keys.hsSecret],
    maxTokenLength: MAX,
    cache: false,
  };
  node = createJwtAuthOn(nodeRuntime, options);
  web = createJwtAuthOn(webRuntime, options);
  await Promise.all([node.ready, web.ready]);
});

/** What a decision is made of, comparable across builds. */
function outcome(result: AuthResult, withClaims: boolean) {
  return result.ok
    ? { ok: true, claims: withClaims ? result.state.claims : undefined, scopes: result.state.scopes }
    : { ok: false, reason: result.error.reason, status: result.error.status };
}

/** `withClaims: false` for claims nested deeper than a recursive comparison can walk. */
async function bothDecide(token: string, withClaims = true) {
  const request = { method: "GET", path: "/x", headers: { authorization: `Bearer ${token}` } };
  // `authenticate` must resolve: a rejection or a throw fails the property here.
  const [fromNode, fromWeb] = await Promise.all([node.authenticate(request), web.authenticate(request)]);
  expect(outcome(fromWeb, withClaims)).toEqual(outcome(fromNode, withClaims));
  return outcome(fromNode, withClaims);
}

const utf8 = (text: string) => new TextEncoder().encode(text);
function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Bytes that sit at the edges of the rules: BOM, invalid or overlong UTF-8, surrogates, NUL, odd spaces. */
const EDGE_BYTES = fc.constantFrom(
  Uint8Array.of(0xef, 0xbb, 0xbf),
  Uint8Array.of(0xc0, 0x80),
  Uint8Array.of(0xed, 0xa0, 0x80),
  Uint8Array.of(0xff),
  Uint8Array.of(0x00),
  Uint8Array.of(0x20),
  Uint8Array.of(0x09),
  Uint8Array.of(0xc2, 0xa0),
  Uint8Array.of(0xe2, 0x80, 0xa8),
  Uint8Array.of(0xf4, 0x90, 0x80, 0x80),
);

/** Nothing, more often than not: a part with edge bytes on both sides is rarely worth a second look. */
const AFFIX = fc.oneof(
  { weight: 3, arbitrary: fc.constant(Uint8Array.of()) },
  { weight: 2, arbitrary: EDGE_BYTES },
);

/** JSON text from arbitrary values (any Unicode, nesting), then edge bytes before and after. */
function jsonBytes(value: fc.Arbitrary<unknown>): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(AFFIX, value, AFFIX)
    .map(([before, json, after]) => concat(before, utf8(JSON.stringify(json) ?? "null"), after));
}

const anyText = fc.string({ unit: "binary", maxLength: 40 });
// Weighted towards headers and payloads that pass everything but the bytes around them.
const headerBytes = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  { weight: 4, arbitrary: jsonBytes(fc.constant({ alg: "HS256", typ: "JWT" })) },
  jsonBytes(fc.record({ alg: fc.constantFrom("HS256", "none", "RS256") }, { requiredKeys: ["alg"] })),
  jsonBytes(
    fc
      .tuple(fc.dictionary(anyText, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), fc.option(anyText))
      .map(([extra, kid]) => ({ ...extra, alg: "HS256", ...(kid === null ? {} : { kid }) })),
  ),
);
const payloadBytes = fc.oneof(fc.uint8Array({ maxLength: 256 }), jsonBytes(fc.jsonValue({ maxDepth: 3 })), {
  weight: 4,
  arbitrary: jsonBytes(
    fc
      .tuple(fc.dictionary(anyText, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }), fc.option(anyText))
      .map(([claims, scopes]) => ({
        ...claims,
        sub: "u1",
        exp: NOW_S() + 300,
        ...(scopes === null ? {} : { scopes }),
      })),
  ),
});

describe("token bytes: both builds decide alike, and authenticate() always resolves", () => {
  it("for arbitrary header and payload bytes under a valid signature", async () => {
    await fc.assert(
      fc.asyncProperty(headerBytes, payloadBytes, async (header, payload) => {
        await bothDecide(hsOverBytes(keys.hsSecret, header, payload));
      }),
      { numRuns: 600 },
    );
  });

  it("for arbitrary token text", async () => {
    const alphabet = fc.constantFrom(..."ABCxyz019-_.=+/ \t,é\u00a0\ufeff".split(""));
    const token = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.string({ unit: alphabet, maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(token, async (value) => {
        await bothDecide(value);
      }),
      { numRuns: 600 },
    );
  });

  it("accepts a valid token of either shape, so the properties above are not all refusals", async () => {
    const header = utf8(JSON.stringify({ alg: "HS256" }));
    const payload = utf8(JSON.stringify({ sub: "u1", exp: NOW_S() + 300, scopes: "a:b c:d", n: "é\u2028" }));
    expect(await bothDecide(hsOverBytes(keys.hsSecret, header, payload))).toMatchObject({ ok: true });
  });

  it("for parts of megabytes, up to maxTokenLength: linear work, constant stack", async () => {
    const header = utf8(JSON.stringify({ alg: "HS256" }));
    const claims = (filler: unknown) => utf8(JSON.stringify({ sub: "u1", exp: NOW_S() + 300, filler }));
    const budget = Math.floor((MAX - 200) * 0.75);
    const cases: [string, Uint8Array, Uint8Array, "ok" | "malformed"][] = [
      ["ASCII payload", header, claims("a".repeat(budget - 100)), "ok"],
      ["non-ASCII payload", header, claims("é".repeat(Math.floor((budget - 100) / 2))), "ok"],
      [
        "BOM before a large payload",
        header,
        concat(Uint8Array.of(0xef, 0xbb, 0xbf), claims("a".repeat(budget - 200))),
        "malformed",
      ],
      [
        "invalid UTF-8 at the end",
        header,
        concat(claims("a".repeat(budget - 200)), Uint8Array.of(0xff)),
        "malformed",
      ],
      [
        "nested arrays ten thousand deep",
        header,
        utf8(`{"sub":"u1","exp":${NOW_S() + 300},"d":${"[".repeat(10_000)}${"]".repeat(10_000)}}`),
        "ok",
      ],
      ["raw bytes", header, new Uint8Array(budget).map((_, i) => (i * 131) & 0xff), "malformed"],
      [
        "a large header",
        utf8(JSON.stringify({ alg: "HS256", pad: "h".repeat(budget - 200) })),
        claims(1),
        "ok",
      ],
    ];
    for (const [name, h, p, expected] of cases) {
      const token = hsOverBytes(keys.hsSecret, h, p);
      expect(token.length, name).toBeLessThanOrEqual(MAX);
      const decided = await bothDecide(token, false);
      expect(decided.ok ? "ok" : decided.reason, name).toBe(expected);
    }
    const deep = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`;
    const deepToken = hsOverBytes(
      keys.hsSecret,
      header,
      utf8(`{"sub":"u1","exp":${NOW_S() + 300},"d":${deep}}`),
    );
    expect((await bothDecide(deepToken, false)).ok, "nested arrays a million deep").toBe(true);
    const unsigned = `${"A".repeat(MAX / 2 - 8)}.${"A".repeat(MAX / 2 - 8)}.`;
    expect(await bothDecide(unsigned)).toMatchObject({ ok: false, status: 401 });
  });
});
