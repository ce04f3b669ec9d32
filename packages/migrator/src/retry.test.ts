import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY, retryDelayMs, retryOption } from "./retry.js";

describe("retryOption", () => {
  it("is on by default, off with false, and fills what is not given", () => {
    expect(retryOption(undefined)).toEqual({ attempts: 4, baseMs: 500, maxMs: 10_000 });
    expect(retryOption(false)).toEqual({ ...DEFAULT_RETRY, attempts: 1 });
    expect(retryOption({ attempts: 2 })).toEqual({ ...DEFAULT_RETRY, attempts: 2 });
    expect(retryOption({ attempts: 1, baseMs: 0, maxMs: 0 })).toEqual({ attempts: 1, baseMs: 0, maxMs: 0 });
  });
});

describe("retryDelayMs", () => {
  const policy = { attempts: 10, baseMs: 100, maxMs: 1_000 };

  it("doubles from baseMs up to maxMs, half of it random", () => {
    const low = (attempt: number) => retryDelayMs(policy, attempt, () => 0);
    const high = (attempt: number) => retryDelayMs(policy, attempt, () => 1);
    expect([1, 2, 3, 4, 5, 6].map(low)).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 6].map(high)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it("stays finite and within maxMs for any attempt", () => {
    for (const attempt of [31, 100, 1_000]) {
      expect(retryDelayMs({ attempts: 1, baseMs: 3_600_000, maxMs: 3_600_000 }, attempt)).toBeLessThanOrEqual(
        3_600_000,
      );
    }
  });
});
