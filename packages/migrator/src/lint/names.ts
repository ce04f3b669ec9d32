import { field, location, type Node } from "./ast.js";

// PostgreSQL keeps NAMEDATALEN - 1 bytes of an identifier, cut at a character boundary.
const MAX_IDENTIFIER_BYTES = 63;
// A cut name is at least this long: the character cut off was at most 4 bytes.
const MIN_CUT_BYTES = MAX_IDENTIFIER_BYTES - 3;

// Fields and lists of the parse tree that hold identifiers.
const IDENTIFIER_FIELDS = new Set([
  "relname",
  "schemaname",
  "colname",
  "idxname",
  "conname",
  "indexname",
  "newname",
  "subname",
  "aliasname",
  "trigname",
  "policy_name",
  "extname",
  "dbname",
]);
const IDENTIFIER_LISTS = new Set([
  "names",
  "funcname",
  "fields",
  "items",
  "colnames",
  "keys",
  "pk_attrs",
  "fk_attrs",
]);
const IDENTIFIER_NODES = new Set(["IndexElem", "ColumnDef", "AlterTableCmd"]);

/** A statement's text: the file's bytes, the same with ASCII letters lowered, and the statement's range. */
export interface StatementText {
  readonly bytes: Buffer;
  readonly lowered: Buffer;
  readonly start: number;
  readonly end: number;
}

const QUOTE = 0x22;
/** Bytes that continue an unquoted identifier: letters, digits, `_`, `$`, and any byte of a multibyte character. */
const identifierByte = (byte: number | undefined) =>
  byte !== undefined && (/[A-Za-z0-9_$]/.test(String.fromCharCode(byte)) || byte >= 0x80);

/**
 * Where the source spells a longer identifier than `name`, or undefined. The parser has already cut every
 * identifier to 63 bytes (warning only in a NOTICE that libpg-query drops), so a name near that length is
 * looked up in the statement's text: an occurrence that starts an identifier and goes on past the name was cut.
 */
function cutAt(name: string, text: StatementText): number | undefined {
  if (Buffer.byteLength(name, "utf8") < MIN_CUT_BYTES) return undefined;
  // Quoted names keep their case and double their quotes; unquoted ones were lowered by the parser.
  const spellings = [
    { haystack: text.bytes, needle: Buffer.from(name.replaceAll('"', '""'), "utf8"), quoted: true },
    { haystack: text.lowered, needle: Buffer.from(name, "utf8"), quoted: false },
  ];
  for (const { haystack, needle, quoted } of spellings) {
    for (let i = haystack.indexOf(needle, text.start); i !== -1; i = haystack.indexOf(needle, i + 1)) {
      const after = i + needle.length;
      if (after > text.end) break;
      const before = text.bytes[i - 1];
      const next = text.bytes[after];
      const cut = quoted
        ? before === QUOTE && (next !== QUOTE || text.bytes[after + 1] === QUOTE)
        : before !== QUOTE && !identifierByte(before) && identifierByte(next);
      if (cut) return quoted ? i - 1 : i;
    }
  }
  return undefined;
}

/** The identifiers PostgreSQL cuts to 63 bytes anywhere in a statement: where each is, and a message. */
export function tooLongIdentifiers(
  stmt: unknown,
  at: number,
  text: StatementText,
): { at: number; message: string }[] {
  const findings: { at: number; message: string }[] = [];
  const reported = new Set<string>();
  const tooLong = (name: string) => {
    if (reported.has(name)) return;
    const where = cutAt(name, text);
    if (where === undefined) return;
    reported.add(name);
    findings.push({
      at: where,
      message: `this identifier is longer than ${MAX_IDENTIFIER_BYTES} bytes; PostgreSQL silently cuts it to ${JSON.stringify(name)}`,
    });
  };
  // Iterative, like `findNodes`: the tree can nest deeper than the call stack.
  const pending: [unknown, string, number][] = [[stmt, "", at]];
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    const [value, parentKey, near] = entry;
    if (Array.isArray(value)) {
      for (const item of value) pending.push([item, parentKey, near]);
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    const node = value as Node;
    const here = location(node) ?? near;
    for (const [key, child] of Object.entries(node)) {
      // An option's value (a function body, a storage parameter) is text, not a name.
      if (parentKey === "DefElem" && key === "arg") continue;
      if (typeof child === "string") {
        if (IDENTIFIER_FIELDS.has(key) || (key === "name" && IDENTIFIER_NODES.has(parentKey))) tooLong(child);
      } else if (key === "String" && IDENTIFIER_LISTS.has(parentKey)) {
        tooLong(String(field(child, "sval") ?? ""));
      } else {
        pending.push([child, key, here]);
      }
    }
  }
  return findings;
}
