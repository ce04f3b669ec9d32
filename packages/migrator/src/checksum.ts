import { createHash } from "node:crypto";

/** sha256 of a migration's source text; line endings are normalised so a CRLF checkout does not read as drift. */
export function checksum(source: string): string {
  return createHash("sha256").update(source.replace(/\r\n/g, "\n")).digest("hex");
}
