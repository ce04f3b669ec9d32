import { describe, expect, it } from "vitest";
import { TokenCache } from "./cache.js";

/** Stores a token under the admission rule: its first sighting is only noted, the second stores it. */
function store(cache: TokenCache<string>, token: string, value: string, nowMs: number, notAfterMs?: number) {
  cache.set(token, value, nowMs, notAfterMs);
  cache.set(token, value, nowMs, notAfterMs);
}

describe("TokenCache", () => {
  it("serves an entry until the earlier of ttl and the token's own expiry", () => {
    const cache = new TokenCache<string>(10, 1_000);
    store(cache, "a", "A", 0);
    store(cache, "b", "B", 0, 500);
    expect(cache.get("a", 999)).toBe("A");
    expect(cache.get("a", 1_000)).toBeUndefined();
    expect(cache.get("b", 499)).toBe("B");
    expect(cache.get("b", 500)).toBeUndefined();
  });

  it("does not store an already expired token", () => {
    const cache = new TokenCache<string>(10, 1_000);
    store(cache, "a", "A", 100, 100);
    expect(cache.size).toBe(0);
  });

  it("stays bounded and evicts the least recently used first", () => {
    const cache = new TokenCache<string>(3, 60_000);
    store(cache, "a", "A", 0);
    store(cache, "b", "B", 0);
    store(cache, "c", "C", 0);
    expect(cache.get("a", 1)).toBe("A");
    store(cache, "d", "D", 2);
    expect(cache.size).toBe(3);
    expect(cache.get("b", 3)).toBeUndefined();
    expect(cache.get("a", 3)).toBe("A");
    expect(cache.get("c", 3)).toBe("C");
    expect(cache.get("d", 3)).toBe("D");
    for (let i = 0; i < 100; i++) store(cache, `t${i}`, "T", 4);
    expect(cache.size).toBe(3);
  });

  it("can be cleared", () => {
    const cache = new TokenCache<string>(3, 60_000);
    store(cache, "a", "A", 0);
    cache.set("b", "B", 0, undefined);
    cache.clear();
    expect(cache.get("a", 1)).toBeUndefined();
    // The "seen once" notes go too: after a clear, a token needs two sightings again.
    cache.set("b", "B", 1, undefined);
    expect(cache.get("b", 2)).toBeUndefined();
    cache.set("b", "B", 2, undefined);
    expect(cache.get("b", 3)).toBe("B");
  });

  it("admits a token on its second sighting only", () => {
    const cache = new TokenCache<string>(3, 60_000);
    cache.set("a", "A", 0, undefined);
    expect(cache.get("a", 1)).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.set("a", "A", 1, undefined);
    expect(cache.get("a", 2)).toBe("A");
    expect(cache.size).toBe(1);
  });

  it("does not let tokens seen once push out cached ones", () => {
    const cache = new TokenCache<string>(2, 60_000);
    store(cache, "a", "A", 0);
    store(cache, "b", "B", 0);
    for (let i = 0; i < 100; i++) cache.set(`once${i}`, "T", 1, undefined);
    expect(cache.size).toBe(2);
    expect(cache.get("a", 2)).toBe("A");
    expect(cache.get("b", 2)).toBe("B");
  });

  it("remembers at most max tokens seen once, forgetting the oldest first", () => {
    const cache = new TokenCache<string>(2, 60_000);
    cache.set("x", "X", 0, undefined);
    cache.set("y", "Y", 0, undefined);
    cache.set("z", "Z", 0, undefined); // forgets "x"
    cache.set("x", "X", 1, undefined); // a first sighting again (and forgets "y")
    expect(cache.get("x", 2)).toBeUndefined();
    cache.set("z", "Z", 2, undefined); // still remembered: stored
    expect(cache.get("z", 3)).toBe("Z");
    cache.set("x", "X", 3, undefined); // second sighting: stored
    expect(cache.get("x", 4)).toBe("X");
    expect(cache.size).toBe(2);
  });

  it("does not note a token it would not store", () => {
    const cache = new TokenCache<string>(2, 60_000);
    cache.set("a", "A", 100, 100); // already expired
    cache.set("a", "A", 100, 200);
    expect(cache.get("a", 101)).toBeUndefined();
    cache.set("a", "A", 101, 200);
    expect(cache.get("a", 102)).toBe("A");
  });

  it("keys by a token's end but answers only for the whole token", () => {
    // Forged tokens that copy a cached token's signature (its end) are not served its result, and do not
    // displace it unless stored themselves (only verified tokens are).
    const end = "S".repeat(100);
    const genuine = `header.payload-of-alice.${end}`;
    const forged = `header.payload-of-admin.${end}`;
    const cache = new TokenCache<string>(3, 60_000);
    store(cache, genuine, "alice", 0);
    expect(cache.get(forged, 1)).toBeUndefined();
    expect(cache.get(forged.slice(1), 1)).toBeUndefined();
    // A request's token is a new string each time: equal content is a hit.
    expect(cache.get(Array.from(genuine).join(""), 1)).toBe("alice");
    store(cache, forged, "admin", 2);
    expect(cache.get(forged, 3)).toBe("admin");
    expect(cache.get(genuine, 3)).toBeUndefined();
    expect(cache.size).toBe(1);
  });
});
