import { describe, expect, it } from "vitest";
import { DataDirFullError, DiskSpaceGuard, isNoSpace } from "./disk-full.js";

const MiB = 1024 * 1024;

function recordingLogger() {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    error: (_: object, message: string) => lines.push({ level: "error", message }),
    info: (_: object, message: string) => lines.push({ level: "info", message }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("DiskSpaceGuard", () => {
  it("refuses below the floor, says so once naming the directory, and lets statements through again once space is back", async () => {
    let free = 100 * MiB;
    const logger = recordingLogger();
    const guard = new DiskSpaceGuard("/data/dir", logger, 64 * MiB, () => ({
      bavail: free / 4096,
      bsize: 4096,
    }));
    guard.check();
    free = 10 * MiB;
    await sleep(300);
    expect(() => guard.check()).toThrow(DataDirFullError);
    await sleep(300);
    expect(() => guard.check()).toThrow(
      /No space left on the device holding PLATFORM_DATA_DIR \(\/data\/dir\) \(10 MiB free/,
    );
    expect(logger.lines).toEqual([
      {
        level: "error",
        message: expect.stringMatching(
          /^No space left on the device holding PLATFORM_DATA_DIR \(\/data\/dir\)/,
        ),
      },
    ]);
    free = 64 * MiB;
    await sleep(300);
    guard.check();
    expect(logger.lines.at(-1)).toEqual({
      level: "info",
      message: expect.stringMatching(/^Space freed on the device holding PLATFORM_DATA_DIR \(\/data\/dir\)/),
    });
    expect(logger.lines).toHaveLength(2);
  });

  it("fails closed when free space cannot be looked up (the directory is gone)", () => {
    const guard = new DiskSpaceGuard("/gone", recordingLogger(), 64 * MiB, () => {
      throw new Error("ENOENT: no such file or directory");
    });
    expect(() => guard.check()).toThrow(/free space unknown: ENOENT/);
  });

  it("looks free space up at most every 250 ms, not on every statement", () => {
    let lookups = 0;
    const guard = new DiskSpaceGuard("/data", recordingLogger(), 1, () => {
      lookups++;
      return { bavail: 10, bsize: 4096 };
    });
    for (let n = 0; n < 1_000; n++) guard.check();
    expect(lookups).toBe(1);
  });

  it("carries PostgreSQL's disk_full code", () => {
    expect(new DataDirFullError("x").code).toBe("53100");
  });
});

describe("isNoSpace", () => {
  it.each([
    ["Node's ENOSPC", Object.assign(new Error("write failed"), { code: "ENOSPC" }), true],
    ["PostgreSQL's disk_full", Object.assign(new Error("could not extend file"), { code: "53100" }), true],
    ["PGlite's file system errno", { name: "ErrnoError", errno: 51 }, true],
    ["the words alone", new Error("could not write: No space left on device"), true],
    ["another errno", { name: "ErrnoError", errno: 44 }, false],
    ["another error", Object.assign(new Error("refused"), { code: "ECONNREFUSED" }), false],
    ["a string", "ENOSPC", false],
    ["null", null, false],
  ])("%s: %s", (_, error, expected) => {
    expect(isNoSpace(error)).toBe(expected);
  });
});
