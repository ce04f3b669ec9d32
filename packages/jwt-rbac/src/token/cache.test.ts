import { describe, expect, it } from "vitest";
import { TokenCache } from "./cache.js";

describe("TokenCache", () => {
  it("serves an entry until the earlier of ttl and the token's own expiry", () => {
    const cache = new TokenCache<string>(10, 1_000);
    cache.set("a", "A", 0, undefined);
    cache.set("b", "B", 0, 500);
    expect(cache.get("a", 999)).toBe("A");
    expect(cache.get("a", 1_000)).toBeUndefined();
    expect(cache.get("b", 499)).toBe("B");
    expect(cache.get("b", 500)).toBeUndefined();
  });

  it("does not store an already expired token", () => {
    const cache = new TokenCache<string>(10, 1_000);
    cache.set("a", "A", 100, 100);
    expect(cache.size).toBe(0);
  });

  it("stays bounded and evicts the least recently used first", () => {
    const cache = new TokenCache<string>(3, 60_000);
    cache.set("a", "A", 0, undefined);
    cache.set("b", "B", 0, undefined);
    cache.set("c", "C", 0, undefined);
    expect(cache.get("a", 1)).toBe("A");
    cache.set("d", "D", 2, undefined);
    expect(cache.size).toBe(3);
    expect(cache.get("b", 3)).toBeUndefined();
    expect(cache.get("a", 3)).toBe("A");
    expect(cache.get("c", 3)).toBe("C");
    expect(cache.get("d", 3)).toBe("D");
    for (let i = 0; i < 100; i++) cache.set(`t${i}`, "T", 4, undefined);
    expect(cache.size).toBe(3);
  });

  it("can be cleared", () => {
    const cache = new TokenCache<string>(3, 60_000);
    cache.set("a", "A", 0, undefined);
    cache.clear();
    expect(cache.get("a", 1)).toBeUndefined();
  });
});
