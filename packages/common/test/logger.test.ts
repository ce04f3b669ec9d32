import { describe, expect, it } from "vitest";
import type { Logger } from "../src/index.js";
import { loggerOption } from "../src/internal.js";
import { capturedConsole, levelsOnlyLogger } from "./plain-loggers.js";

describe("loggerOption with a logger that has no child", () => {
  it("accepts console, and its children print their bindings with each record", () => {
    const { console, output } = capturedConsole();
    const logger = loggerOption(console, "c");
    logger.info("plain");
    logger.child({ channel: "whatsapp" }).child({ message_id: "m1" }).warn({ attempt: 2 }, "retrying");
    logger.child({ channel: "slack" }).error("down");
    const lines = output().split("\n");
    expect(lines[0]).toBe("plain");
    expect(output()).toMatch(/channel: 'whatsapp', message_id: 'm1', attempt: 2 \} retrying/);
    expect(output()).toMatch(/channel: 'slack' \} down/);
    expect(output()).not.toContain("undefined");
  });

  it("passes a levels-only logger's records on as (fields, message), bindings first, `this` kept", () => {
    const { logger: target, calls } = levelsOnlyLogger();
    const bound = {
      ...target,
      seen: [] as unknown[],
      debug(this: { seen: unknown[] }, ...args: unknown[]) {
        this.seen.push(args);
      },
    };
    const logger: Logger = loggerOption(bound, "c");
    logger.child({ a: 1 }).debug({ b: 2 }, "d");
    expect(bound.seen).toEqual([[{ a: 1, b: 2 }, "d"]]);

    const plain = loggerOption(target, "c");
    plain.info({ x: 1 }, "root");
    plain.info("text only");
    const child = plain.child({ channel: "telegram", x: 0 });
    child.warn({ x: 1 }, "fields win over bindings, as in pino");
    child.error("no fields");
    child.child({ deeper: true }).info({ y: 2 });
    expect(calls).toEqual([
      { level: "info", args: [{ x: 1 }, "root"] },
      { level: "info", args: ["text only"] },
      { level: "warn", args: [{ channel: "telegram", x: 1 }, "fields win over bindings, as in pino"] },
      { level: "error", args: [{ channel: "telegram", x: 0 }, "no fields"] },
      { level: "info", args: [{ channel: "telegram", x: 0, deeper: true, y: 2 }] },
    ]);
  });

  it("uses a logger's own child when it has one", () => {
    const children: unknown[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn() {},
      error() {},
      child(bindings) {
        children.push(bindings);
        return logger;
      },
    };
    expect(loggerOption(logger, "c")).toBe(logger);
    loggerOption(logger, "c").child({ k: "v" });
    expect(children).toEqual([{ k: "v" }]);
  });
});
