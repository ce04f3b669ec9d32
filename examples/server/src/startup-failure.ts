import { isConfigError } from "@agent-platform/common";
import { StartupError } from "./startup-error.js";

/**
 * One line for the operator, naming the cause and the fix: a configuration error lists its problems on that
 * line, and an unexpected error shows its message (its stack only with LOG_LEVEL=debug or trace).
 */
export function startupFailureLine(error: unknown, logLevel = process.env.LOG_LEVEL): string {
  let message: string;
  if (isConfigError(error)) message = `Invalid configuration: ${error.problems.join("; ")}`;
  else if (error instanceof StartupError) message = error.message;
  else if (error instanceof Error && (logLevel === "debug" || logLevel === "trace")) {
    return `The server did not start. ${error.stack ?? error.message}\n`;
  } else {
    message = `${thrownText(error)} (LOG_LEVEL=debug shows where)`;
  }
  // Whatever the message holds, it stays on one line.
  return `The server did not start. ${message.replace(/\s*[\r\n]+\s*/g, " ")}\n`;
}

/**
 * Words for whatever was thrown: an Error's message, and for anything else (a library may throw a plain object,
 * as PGlite's file system does) its name and fields, never `[object Object]`. At most 500 characters.
 */
function thrownText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error !== "object" || error === null) return `${typeof error} thrown: ${String(error)}`;
  let fields: string;
  try {
    fields = JSON.stringify(error) ?? "";
  } catch {
    fields = "";
  }
  const name = (error as { name?: unknown }).name;
  const text = `${typeof name === "string" ? name : (error.constructor?.name ?? "object")} thrown${fields === "" || fields === "{}" ? "" : `: ${fields}`}`;
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
