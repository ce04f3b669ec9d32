import { describe, expect, it } from "vitest";
import { retryDelayMs } from "./backoff.js";

describe("retryDelayMs", () => {
  it("doubles per attempt within the jitter band", () => {
    expect(retryDelayMs(1, 1000, 60_000, () => 1)).toBe(1000);
    expect(retryDelayMs(2, 1000, 60_000, () => 1)).toBe(2000);
    expect(retryDelayMs(4, 1000, 60_000, () => 1)).toBe(8000);
    expect(retryDelayMs(4, 1000, 60_000, () => 0)).toBe(4000);
  });

  it("never exceeds the cap", () => {
    expect(retryDelayMs(30, 1000, 60_000, () => 1)).toBe(60_000);
  });
});
