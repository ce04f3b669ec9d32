import { describe, expect, it } from "vitest";
import { ConfigError, isConfigError } from "../src/index.js";
import { configError, loggerOption, SILENT_LOGGER } from "../src/internal.js";

describe("ConfigError", () => {
  it("carries a stable code, the component, the option and every problem", () => {
    const cause = new Error("underlying");
    const error = new ConfigError("`schema` is not an identifier", {
      component: "migrator",
      option: "schema",
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ConfigError");
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.component).toBe("migrator");
    expect(error.option).toBe("schema");
    expect(error.problems).toEqual(["`schema` is not an identifier"]);
    expect(error.cause).toBe(cause);
  });

  it("configError names the component, the option at fault and every problem", () => {
    const single = configError("migrator", "`dir` is unreadable", "dir");
    expect(single).toBeInstanceOf(ConfigError);
    expect(single).toMatchObject({ component: "migrator", option: "dir", problems: ["`dir` is unreadable"] });
    const several = configError("messaging", "slack: A; B", undefined, ["A", "B"]);
    expect(several).toMatchObject({ component: "messaging", option: undefined, problems: ["A", "B"] });
  });

  it("keeps a list of problems when several are reported at once", () => {
    const error = new ConfigError("Invalid configuration", { component: "server", problems: ["A", "B"] });
    expect(error.problems).toEqual(["A", "B"]);
    expect(error.option).toBeUndefined();
    expect("cause" in error).toBe(false);
  });

  it("isConfigError knows a ConfigError of another copy of the package, and nothing else", () => {
    // What the class of the other (ESM or CJS) build looks like from here: same name, code and fields.
    class OtherCopy extends Error {
      override readonly name = "ConfigError";
      readonly code = "CONFIG_INVALID";
      readonly component = "jwt-rbac";
    }
    expect(isConfigError(new ConfigError("x", { component: "messaging" }))).toBe(true);
    expect(isConfigError(new OtherCopy("x"))).toBe(true);
    const lookalike = Object.assign(new Error("x"), { name: "ConfigError", code: "OTHER", component: "c" });
    expect(isConfigError(lookalike)).toBe(false);
    expect(isConfigError({ name: "ConfigError", code: "CONFIG_INVALID", component: "c" })).toBe(false);
    expect(isConfigError(new Error("x"))).toBe(false);
  });
});

describe("loggerOption", () => {
  it("is silent when no logger is given, and the logger itself when it has the shape", () => {
    expect(loggerOption(undefined, "c")).toBe(SILENT_LOGGER);
    const logger = { ...SILENT_LOGGER, child: () => logger };
    expect(loggerOption(logger, "c")).toBe(logger);
  });

  it.each([
    ["a function (the migrator's old logger)", () => {}, "missing debug, info, warn, error"],
    ["a logger without debug", { info() {}, warn() {}, error() {}, child() {} }, "missing debug"],
    ["null", null, "missing debug, info, warn, error"],
    ["a child that is not a function", { debug() {}, info() {}, warn() {}, error() {}, child: 1 }, "child"],
  ])("refuses %s with a ConfigError naming the component and what is missing", (_, value, missing) => {
    let thrown: unknown;
    try {
      loggerOption(value, "jwt-rbac");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({ component: "jwt-rbac", option: "logger" });
    expect((thrown as Error).message).toContain(missing);
  });

  it("the silent logger's children are silent too", () => {
    expect(SILENT_LOGGER.child({ a: 1 })).toBe(SILENT_LOGGER);
  });
});
