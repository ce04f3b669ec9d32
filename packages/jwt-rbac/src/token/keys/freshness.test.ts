import { describe, expect, it } from "vitest";
import { freshnessMs } from "./freshness.js";

const bounds = { defaultMs: 600_000, minMs: 30_000, maxMs: 86_400_000 };

describe("freshnessMs", () => {
  it.each([
    [null, 600_000],
    ["", 600_000],
    ["public", 600_000],
    ["max-age=300", 300_000],
    ["public, max-age=3600, must-revalidate", 3_600_000],
    ['max-age="120"', 120_000],
    ["MAX-AGE=120", 120_000],
    ["max-age=0", 30_000],
    ["max-age=5", 30_000],
    ["no-cache", 30_000],
    ["no-store, max-age=600", 30_000],
    ["max-age=31536000", 86_400_000],
    ["max-age=99999999999999999999", 600_000],
    ["max-age=-5", 600_000],
    ["max-age=abc", 600_000],
  ])("%s -> %i ms", (header, expected) => {
    expect(freshnessMs(header, bounds)).toBe(expected);
  });
});
