import { describe, expect, it } from "vitest";
import { InvalidVersionError } from "./errors.js";
import { compareVersions, isVersion, parseVersion } from "./version.js";

const order = (a: string, b: string) => Math.sign(compareVersions(parseVersion(a), parseVersion(b)));

describe("parseVersion", () => {
  it("accepts semantic versions with an optional leading v and stores them without it", () => {
    expect(parseVersion("v2.3.0").text).toBe("2.3.0");
    expect(parseVersion("2.3.0-rc.1").text).toBe("2.3.0-rc.1");
    expect(parseVersion("0.0.0").core).toEqual([0, 0, 0]);
  });

  it.each([
    "2.3",
    "2",
    "2.3.0.1",
    "V2.3.0",
    "02.3.0",
    "2.3.0-",
    "2.3.0-01",
    "2.3.0+build",
    " 2.3.0",
    "x",
    "",
  ])("rejects %j", (input) => {
    expect(() => parseVersion(input)).toThrow(InvalidVersionError);
  });

  it("rejects numbers too large to order exactly", () => {
    expect(() => parseVersion("99999999999999999999.0.0")).toThrow(InvalidVersionError);
  });
});

describe("compareVersions", () => {
  it("orders numerically, not as text", () => {
    expect(order("2.10.0", "2.9.0")).toBe(1);
    expect(order("10.0.0", "9.9.9")).toBe(1);
    expect(order("v1.0.0", "1.0.0")).toBe(0);
  });

  it("follows semver precedence for prereleases", () => {
    const sorted = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
    ];
    const shuffled = [...sorted].reverse();
    shuffled.sort(order);
    expect(shuffled).toEqual(sorted);
  });
});

describe("isVersion", () => {
  it("accepts exactly what parseVersion accepts, and bounds the input", () => {
    expect(["2.5.6", "v2.5.6", "1.0.0-rc.1"].every(isVersion)).toBe(true);
    expect(["base", "1..2", "", "1.0.0+build", `1.0.0-${"a".repeat(300)}`, 1, null].some(isVersion)).toBe(
      false,
    );
  });
});
