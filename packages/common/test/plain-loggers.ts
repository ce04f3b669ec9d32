import { Console } from "node:console";
import { PassThrough } from "node:stream";

/**
 * Loggers without `child`, as a user may pass them to any package: a real `Console` (what `console` is)
 * writing to a stream the test reads, and a logger with the four levels only that records each call.
 * The tests of every package import them from here, beside the recording pino logger.
 */
export function capturedConsole(): { console: Console; output: () => string } {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return {
    console: new Console({ stdout: stream, stderr: stream, colorMode: false }),
    output: () => text,
  };
}

export interface LevelCall {
  level: "debug" | "info" | "warn" | "error";
  args: unknown[];
}

export function levelsOnlyLogger() {
  const calls: LevelCall[] = [];
  const record =
    (level: LevelCall["level"]) =>
    (...args: unknown[]) => {
      calls.push({ level, args });
    };
  return {
    logger: { debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") },
    calls,
  };
}
