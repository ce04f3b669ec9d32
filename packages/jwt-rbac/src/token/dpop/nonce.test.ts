import { describe, expect, it } from "vitest";
import { NonceSource } from "./nonce.js";

// A nonce lives from the start of its window to the end of the next one: the exact edges, both sides.
describe("DPoP nonce windows", () => {
  const ROTATE = 60_000;
  const SECRET = "s".repeat(32);
  const window = 29_000_000; // some window far from 0: its start is window * ROTATE
  const start = window * ROTATE;

  it("accepts its own and the next window's nonce, to the last millisecond, and nothing else", async () => {
    const source = new NonceSource({ secret: SECRET, rotateMs: ROTATE });
    const nonce = await source.current(start);
    expect(await source.current(start + ROTATE - 1)).toBe(nonce);
    expect(await source.current(start + ROTATE)).not.toBe(nonce);
    const at = async (ms: number) => source.accepts(nonce, ms);
    // Its own window, first and last millisecond.
    expect(await at(start)).toBe(true);
    expect(await at(start + ROTATE - 1)).toBe(true);
    // The next window, first and last millisecond: still accepted (a client that just got it).
    expect(await at(start + ROTATE)).toBe(true);
    expect(await at(start + 2 * ROTATE - 1)).toBe(true);
    // Two windows on: refused from the first millisecond, and later.
    expect(await at(start + 2 * ROTATE)).toBe(false);
    expect(await at(start + 3 * ROTATE - 1)).toBe(false);
    expect(await at(start + 10 * ROTATE)).toBe(false);
    // Before its window (a nonce from the future): refused.
    expect(await at(start - 1)).toBe(false);
    expect(await at(start - ROTATE)).toBe(false);
  });

  it("refuses another secret's nonce, a changed one, and values that are not nonces", async () => {
    const source = new NonceSource({ secret: SECRET, rotateMs: ROTATE });
    const other = new NonceSource({ secret: "t".repeat(32), rotateMs: ROTATE });
    const nonce = await source.current(start);
    expect(await source.accepts(await other.current(start), start)).toBe(false);
    const last = nonce.at(-1) === "A" ? "B" : "A";
    for (const bad of [
      `${nonce.slice(0, -1)}${last}`,
      nonce.slice(1),
      `${nonce}x`,
      "",
      1,
      null,
      "x".repeat(65),
    ]) {
      expect(await source.accepts(bad, start), String(bad)).toBe(false);
    }
    // Two replicas with one secret agree, window by window.
    const replica = new NonceSource({ secret: SECRET, rotateMs: ROTATE });
    expect(await replica.accepts(nonce, start + ROTATE)).toBe(true);
    expect(await replica.accepts(nonce, start + 2 * ROTATE)).toBe(false);
  });
});
