import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hexBytes } from "./hex.js";

describe("hexBytes", () => {
  it("decodes every byte value, in lower and upper case, as Buffer does", () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, byte) => byte));
    const lower = all.toString("hex");
    expect(Buffer.from(hexBytes(lower)).equals(all)).toBe(true);
    expect(Buffer.from(hexBytes(lower.toUpperCase())).equals(all)).toBe(true);
  });

  it("decodes mixed-case signatures as Buffer does", () => {
    for (let round = 0; round < 50; round++) {
      const bytes = randomBytes(32);
      const mixed = [...bytes.toString("hex")]
        .map((digit, index) => (index % 3 === 0 ? digit.toUpperCase() : digit))
        .join("");
      expect(Buffer.from(hexBytes(mixed)).equals(bytes)).toBe(true);
    }
  });

  it("gives no bytes for an empty string", () => {
    expect(hexBytes("")).toEqual(new Uint8Array(0));
  });
});
