import { configError } from "@agent-platform/common/internal";

// Plain identifiers only: no dots (postgres.js would split them into a qualified name), no quotes, at most
// PostgreSQL's 63 bytes. They are still always quoted in SQL, so case is kept as given.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export function validateIdentifier(value: unknown, option: string): string {
  if (typeof value !== "string" || !IDENTIFIER.test(value)) {
    throw configError(
      "migrator",
      `\`${option}\` must be a plain identifier (letters, digits, _ or $, starting with a letter or _, at most 63 characters); got ${JSON.stringify(value)}`,
      option,
    );
  }
  return value;
}
