import { readFileSync } from "node:fs";
import { configError } from "../config-error.js";

/** Reads a JWKS file once, at construction. Shape checks happen in the shared core. */
export function readJwksFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "read error";
    throw configError(`cannot read JWKS file "${path}" (${code})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw configError(`JWKS file "${path}" is not valid JSON`);
  }
}
