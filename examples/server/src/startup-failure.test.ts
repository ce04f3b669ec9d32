import { ConfigError } from "@agent-platform/common";
import { describe, expect, it } from "vitest";
import { StartupError } from "./startup-error.js";
import { startupFailureLine } from "./startup-failure.js";

/** What PGlite's file system (Emscripten) throws when the disk is full: not an Error, no message. */
class ErrnoError {
  readonly name: string;
  readonly errno: number;
  constructor(errno: number) {
    this.name = "ErrnoError";
    this.errno = errno;
  }
}

describe("the one line a failed start prints", () => {
  it.each([
    ["an Error", new Error("boom"), "The server did not start. boom (LOG_LEVEL=debug shows where)\n"],
    [
      "an object that is not an Error",
      new ErrnoError(51),
      'The server did not start. ErrnoError thrown: {"name":"ErrnoError","errno":51} (LOG_LEVEL=debug shows where)\n',
    ],
    [
      "a plain object",
      { code: 7 },
      'The server did not start. Object thrown: {"code":7} (LOG_LEVEL=debug shows where)\n',
    ],
    ["a string", "nope", "The server did not start. string thrown: nope (LOG_LEVEL=debug shows where)\n"],
    [
      "undefined",
      undefined,
      "The server did not start. undefined thrown: undefined (LOG_LEVEL=debug shows where)\n",
    ],
    ["null", null, "The server did not start. object thrown: null (LOG_LEVEL=debug shows where)\n"],
    [
      "an object without a prototype",
      Object.create(null),
      "The server did not start. object thrown (LOG_LEVEL=debug shows where)\n",
    ],
    [
      "an Error without a message",
      new TypeError(),
      "The server did not start. TypeError (LOG_LEVEL=debug shows where)\n",
    ],
  ])("names %s in words, never [object Object]", (_, thrown, line) => {
    expect(startupFailureLine(thrown, "info")).toBe(line);
  });

  it("stays one line, and bounded, for an object whose fields hold newlines or go on and on", () => {
    const line = startupFailureLine({ text: `a\nb${"x".repeat(10_000)}` }, "info");
    expect(line.trimEnd().split("\n")).toHaveLength(1);
    expect(line.length).toBeLessThan(700);
  });

  it("survives an object JSON cannot write (a cycle, a BigInt, a throwing toJSON)", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const throwing = {
      toJSON() {
        throw new Error("no");
      },
    };
    for (const thrown of [cyclic, { big: 1n }, throwing]) {
      expect(startupFailureLine(thrown, "info")).toBe(
        "The server did not start. Object thrown (LOG_LEVEL=debug shows where)\n",
      );
    }
  });

  it("prints a StartupError's and a ConfigError's own words", () => {
    expect(startupFailureLine(new StartupError("DATA_DIR_FULL", "No space left"), "info")).toBe(
      "The server did not start. No space left\n",
    );
    const config = new ConfigError("PORT must be a number", {
      component: "server",
      problems: ["PORT must be a number"],
    });
    expect(startupFailureLine(config, "info")).toMatch(/^The server did not start. Invalid configuration: /);
  });
});
