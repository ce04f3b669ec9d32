import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as nodeBuild from "./node/secure-compare.js";
import * as webBuild from "./secure-compare.js";

// The Node build (node:crypto) and the WebCrypto build (Workers, Deno, Bun) must give the same answer to
// every input, or a delivery accepted on one runtime would be refused on another.
const builds = { node: nodeBuild, web: webBuild };

const body = new TextEncoder().encode('{"object":"whatsapp_business_account","entry":[]}');
const secrets = ["app-secret", "é✓ unicode secret", "x".repeat(200), "\u0000nul inside"];

function macsFor(secret: string): [string, Uint8Array][] {
  const good = createHmac("sha256", secret).update(body).digest();
  const flipped = Uint8Array.from(good);
  flipped[31] = (flipped[31] as number) ^ 1;
  return [
    ["the right MAC", good],
    ["one bit flipped", flipped],
    ["truncated", good.subarray(0, 31)],
    ["one byte longer", Uint8Array.from([...good, 0])],
    ["empty", new Uint8Array()],
    ["the MAC under another secret", createHmac("sha256", `${secret}!`).update(body).digest()],
    ["the MAC of another body", createHmac("sha256", secret).update("{}").digest()],
  ];
}

describe("isHmacSha256: the node:crypto and WebCrypto builds decide identically", () => {
  for (const secret of secrets) {
    for (const [label, mac] of macsFor(secret)) {
      it(`${JSON.stringify(secret.slice(0, 12))}: ${label}`, async () => {
        const expected = label === "the right MAC";
        expect(await builds.node.isHmacSha256(secret, body, mac)).toBe(expected);
        expect(await builds.web.isHmacSha256(secret, body, mac)).toBe(expected);
      });
    }
  }

  it("both refuse an empty secret, under which anyone can compute MACs", async () => {
    const mac = createHmac("sha256", "").update(body).digest();
    for (const build of Object.values(builds)) {
      await expect(build.isHmacSha256("", body, mac)).rejects.toThrow(TypeError);
    }
  });

  it("a cached key answers for its own secret only (the WebCrypto build imports each secret once)", async () => {
    for (let round = 0; round < 2; round++) {
      for (const secret of secrets) {
        const [, good] = macsFor(secret)[0] as [string, Uint8Array];
        for (const other of secrets) {
          expect(await builds.web.isHmacSha256(other, body, good)).toBe(other === secret);
          expect(await builds.node.isHmacSha256(other, body, good)).toBe(other === secret);
        }
      }
    }
  });
});

describe("secureEquals: the two builds decide identically", () => {
  const pairs: [string, string][] = [
    ["token", "token"],
    ["token", "Token"],
    ["token", "token "],
    ["", ""],
    ["", "token"],
    ["tökén", "tökén"],
    ["tökén", "token"],
    ["a".repeat(10_000), "a".repeat(10_000)],
    ["a".repeat(10_000), `${"a".repeat(9_999)}b`],
  ];
  for (const [given, expected] of pairs) {
    it(`${JSON.stringify(given.slice(0, 8))} (${given.length}) vs ${JSON.stringify(expected.slice(0, 8))} (${expected.length})`, async () => {
      expect(await builds.node.secureEquals(given, expected)).toBe(given === expected);
      expect(await builds.web.secureEquals(given, expected)).toBe(given === expected);
    });
  }
});
