import { describe, expect, it } from "vitest";
import { splitIntoNumberedChunks } from "./chunk.js";

describe("splitIntoNumberedChunks", () => {
  it("keeps text within the limit as one unnumbered part", () => {
    const text = "a".repeat(4096);
    expect(splitIntoNumberedChunks(text, 4096)).toEqual([text]);
  });

  it("splits one character over the limit into two numbered parts within the limit", () => {
    const parts = splitIntoNumberedChunks("a".repeat(4097), 4096);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatch(/^\(1\/2\) a+$/);
    expect(parts[1]).toMatch(/^\(2\/2\) a+$/);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4096);
    expect(parts.map((part) => part.replace(/^\(\d+\/\d+\) /, "")).join("")).toBe("a".repeat(4097));
  });

  it("cuts at whitespace in the second half of a part and drops that one space", () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");
    const parts = splitIntoNumberedChunks(words, 50);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(50);
      expect(part).toMatch(/^\(\d+\/\d+\) word\d+( word\d+)*$/);
    }
    expect(parts.map((part) => part.replace(/^\(\d+\/\d+\) /, "")).join(" ")).toBe(words);
  });

  it("widens the numbering when the count reaches two digits and still keeps every part within the limit", () => {
    const text = "b".repeat(20 * 11);
    const parts = splitIntoNumberedChunks(text, 20);
    expect(parts.length).toBeGreaterThanOrEqual(10);
    expect(parts[0]?.startsWith(`(1/${parts.length}) `)).toBe(true);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(20);
    expect(parts.map((part) => part.replace(/^\(\d+\/\d+\) /, "")).join("")).toBe(text);
  });

  it("counts code points, so a surrogate pair is never cut in half", () => {
    const text = "😀".repeat(15);
    const parts = splitIntoNumberedChunks(text, 12);
    for (const part of parts) {
      expect(Array.from(part).length).toBeLessThanOrEqual(12);
      expect(part).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    }
    expect(parts.map((part) => part.replace(/^\(\d+\/\d+\) /, "")).join("")).toBe(text);
  });
});
