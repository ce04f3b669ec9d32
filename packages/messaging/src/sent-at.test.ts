import { describe, expect, it } from "vitest";
import { stampToMs } from "./sent-at.js";

describe("stampToMs", () => {
  it("reads each product's stamp as milliseconds", () => {
    expect(stampToMs("1700000000")).toBe(1_700_000_000_000);
    expect(stampToMs(1700000001)).toBe(1_700_000_001_000);
    expect(stampToMs("1700000000.000100")).toBe(1_700_000_000_000);
    expect(stampToMs("1700000000.123456")).toBe(1_700_000_000_123);
  });

  it("ignores anything that is not a plain stamp in seconds", () => {
    for (const odd of [
      undefined,
      null,
      "",
      " 1700000000",
      "1700000000 ",
      "1e9",
      "0x65537f00",
      "-1700000000",
      "+1700000000",
      "1700000000.",
      "1700000000.1234567",
      "17000000000000",
      "1".repeat(10_000),
      "١٧٠٠٠٠٠٠٠٠",
      Number.NaN,
      Number.POSITIVE_INFINITY,
      1.5e12,
      {},
      [],
      true,
    ]) {
      expect(stampToMs(odd)).toBeUndefined();
    }
  });
});
