import { readFileSync } from "node:fs";
import { configError } from "@agent-platform/common/internal";

/** Reads a JWKS file once, at construction. Shape checks happen in the shared core. */
export function readJwksFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "read error";
    throw configError("jwt-rbac", `cannot read JWKS file "${path}" (${code})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw configError("jwt-rbac", `JWKS file "${path}" is not valid JSON`);
  }
}
