import { retainedMemory } from "@agent-platform/test-support/flood";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryReplayStore } from "../src/index.js";
import { ReplayStoreFullError } from "../src/token/dpop/replay.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { type DpopClient, dpopClient } from "./fixtures/dpop-client.js";
import { MOUNTED_ADAPTERS, startMounted } from "./fixtures/mounted.js";

// One client (one key thumbprint) filling the in-memory replay store must not lock the others out:
// each thumbprint holds at most its share (a tenth of replayMax by default); past it that client's proofs
// are refused while every other client's are still accepted. The store stays fail-closed when full.

let as: AuthorizationServer;
let noisy: DpopClient;
let quiet: DpopClient;
beforeAll(async () => {
  as = await startAuthorizationServer();
  [noisy, quiet] = await Promise.all([dpopClient("ES256"), dpopClient("EdDSA")]);
});
afterAll(async () => {
  await as.close();
});

const bound = async (client: DpopClient) =>
  (await as.issue({ dpop: await client.proof({ method: "POST", url: as.tokenUrl }) })).access_token;

describe.each(MOUNTED_ADAPTERS)("the in-memory replay store's share per key, %s", (adapter) => {
  it("refuses the client that filled its share and keeps accepting the others", async () => {
    // replayMax 100: a share of 10 proofs per key within the window.
    const server = await startMounted(adapter, {
      algorithm: "ES256",
      issuer: as.issuer,
      jwksUrl: as.jwksUrl,
      dpop: { replayMax: 100 },
    });
    try {
      const url = `${server.url}/agents`;
      const send = async (client: DpopClient, token: string) => {
        const proof = await client.proof({ method: "GET", url, accessToken: token });
        const response = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
        const body = (await response.json()) as { detail?: string };
        return response.status === 200 ? "ok" : `${response.status} ${body.detail}`;
      };
      const [noisyToken, quietToken] = await Promise.all([bound(noisy), bound(quiet)]);
      const memoryBefore = retainedMemory().heapUsed;
      // The noisy client sends more proofs than the whole store holds; then the quiet one comes.
      const noisyAnswers: string[] = [];
      for (let i = 0; i < 105; i++) noisyAnswers.push(await send(noisy, noisyToken));
      const quietAnswers: string[] = [];
      for (let i = 0; i < 10; i++) quietAnswers.push(await send(quiet, quietToken));
      expect(noisyAnswers.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => "ok"));
      expect(new Set(noisyAnswers.slice(10))).toEqual(
        new Set(["401 Invalid DPoP proof: too many proofs with this key within the window, try again later"]),
      );
      // The quiet client has a share of its own.
      expect(quietAnswers).toEqual(Array.from({ length: 10 }, () => "ok"));
      expect(retainedMemory().heapUsed - memoryBefore).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await server.close();
    }
  });
});

describe("MemoryReplayStore", () => {
  it("bounds each key's share, frees it as proofs expire, and stays fail-closed when full", async () => {
    const store = new MemoryReplayStore(100, 10);
    const soon = Date.now() + 300;
    const later = Date.now() + 60_000;
    for (let i = 0; i < 10; i++) expect(store.add(`A:${i}`, soon)).toBe(true);
    expect(() => store.add("A:10", soon)).toThrow(/one key holds 10 proofs/);
    // A replay is still a replay, not a share refusal.
    expect(store.add("A:3", soon)).toBe(false);
    // Nine other clients fill the rest of the store.
    for (let c = 0; c < 9; c++)
      for (let i = 0; i < 10; i++) expect(store.add(`C${c}:${i}`, later)).toBe(true);
    expect(store.size).toBe(100);
    // Full: a new client is refused (never an unexpired jti forgotten).
    expect(() => store.add("new:0", later)).toThrow(ReplayStoreFullError);
    await new Promise((done) => setTimeout(done, 350));
    // A's proofs expired: its share and the store have room again.
    expect(store.add("A:10", later)).toBe(true);
    expect(store.add("new:0", later)).toBe(true);
    expect(store.size).toBeLessThanOrEqual(100);
    // A key without a thumbprint prefix is its own client.
    const plain = new MemoryReplayStore(10, 1);
    expect(plain.add("x", later)).toBe(true);
    expect(plain.add("y", later)).toBe(true);
  });
});
