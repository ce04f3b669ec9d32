/**
 * Which index a statement builds concurrently, read from its text. A failed concurrent build leaves an
 * INVALID index behind; knowing its name is how the migrator finds that one (and only that one) to drop.
 */
export type IndexBuild =
  | {
      /** `CREATE [UNIQUE] INDEX CONCURRENTLY [IF NOT EXISTS] name ON table`. */
      readonly kind: "create";
      /** `null`: an unnamed index, whose name PostgreSQL picks (see the README). */
      readonly name: string | null;
      /** The table as `to_regclass` takes it (quoted, schema-qualified as written). */
      readonly table: string;
    }
  | {
      /** `REINDEX INDEX|TABLE CONCURRENTLY name`: leaves `<index>_ccnew` (or `_ccold`) when it fails. */
      readonly kind: "reindex";
      readonly target: "index" | "table";
      /** The index or table as `to_regclass` takes it. */
      readonly name: string;
    };

/** How a statement's text names what it works on; text past the head is never read. */
type Token = { word: string } | { quoted: string } | { punct: string };

const MAX_HEAD_TOKENS = 32;

/** The first tokens of `text`, comments and whitespace skipped; stops at the first thing it cannot read. */
function headTokens(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length && tokens.length < MAX_HEAD_TOKENS) {
    const rest = text.slice(i, i + 2);
    const ch = text[i] as string;
    // PostgreSQL's whitespace is ASCII only: a no-break space is part of an identifier to it.
    if (/[ \t\n\r\f\v]/.test(ch)) {
      i++;
    } else if (rest === "--") {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end + 1;
    } else if (rest === "/*") {
      // Block comments nest in PostgreSQL.
      let depth = 0;
      do {
        if (text.startsWith("/*", i)) {
          depth++;
          i += 2;
        } else if (text.startsWith("*/", i)) {
          depth--;
          i += 2;
        } else {
          i++;
        }
      } while (depth > 0 && i < text.length);
    } else if (ch === '"') {
      let value = "";
      let j = i + 1;
      for (;;) {
        const end = text.indexOf('"', j);
        if (end === -1) return tokens;
        value += text.slice(j, end);
        if (text[end + 1] === '"') {
          value += '"';
          j = end + 2;
        } else {
          i = end + 1;
          break;
        }
      }
      tokens.push({ quoted: value });
    } else if (/[A-Za-z_\u0080-\uffff]/.test(ch)) {
      const match = /^[A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*/.exec(text.slice(i, i + 256));
      const word = (match as RegExpExecArray)[0];
      // Unquoted identifiers fold to lower case (ASCII only, as PostgreSQL does).
      tokens.push({ word: word.replace(/[A-Z]+/g, (s) => s.toLowerCase()) });
      i += word.length;
    } else {
      tokens.push({ punct: ch });
      i++;
    }
  }
  return tokens;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Reads `ident[.ident]` at `at`; unquoted keywords are identifiers here, as the grammar allows there. */
function qualifiedName(tokens: Token[], at: number): { parts: string[]; next: number } | null {
  const parts: string[] = [];
  let i = at;
  for (;;) {
    const token = tokens[i];
    if (!token || "punct" in token) return null;
    parts.push("word" in token ? token.word : token.quoted);
    i++;
    const dot = tokens[i];
    if (dot && "punct" in dot && dot.punct === "." && parts.length < 3) i++;
    else return { parts, next: i };
  }
}

const isWord = (token: Token | undefined, ...words: string[]) =>
  token !== undefined && "word" in token && words.includes(token.word);

/**
 * The concurrent index build `text` starts with, or `null` when it is none (a plain `CREATE INDEX`,
 * `REINDEX SCHEMA`/`DATABASE`/`SYSTEM`, anything else). Leading comments are skipped, so an SQL file
 * with the `no-transaction` marker on top is read the same as the bare statement.
 */
export function parseIndexBuild(text: string): IndexBuild | null {
  const tokens = headTokens(text.slice(0, 4096));
  let i = 0;
  if (isWord(tokens[i], "create")) {
    i++;
    if (isWord(tokens[i], "unique")) i++;
    if (!isWord(tokens[i], "index") || !isWord(tokens[i + 1], "concurrently")) return null;
    i += 2;
    let name: string | null = null;
    if (isWord(tokens[i], "if") && isWord(tokens[i + 1], "not") && isWord(tokens[i + 2], "exists")) i += 3;
    if (!isWord(tokens[i], "on")) {
      const token = tokens[i];
      if (!token || "punct" in token) return { kind: "create", name: null, table: "" };
      name = "word" in token ? token.word : token.quoted;
      i++;
      if (!isWord(tokens[i], "on")) return { kind: "create", name: null, table: "" };
    }
    i++;
    if (isWord(tokens[i], "only")) i++;
    const table = qualifiedName(tokens, i);
    if (!table) return { kind: "create", name: null, table: "" };
    return { kind: "create", name, table: table.parts.map(quoteIdent).join(".") };
  }
  if (!isWord(tokens[i], "reindex")) return null;
  i++;
  let concurrently = false;
  const open = tokens[i];
  if (open && "punct" in open && open.punct === "(") {
    // `( option [value] [, ...] )`: CONCURRENTLY on unless its value is false, off or 0.
    for (i++; i < tokens.length; i++) {
      const token = tokens[i] as Token;
      if ("punct" in token && token.punct === ")") break;
      if (isWord(token, "concurrently")) {
        const value = tokens[i + 1];
        concurrently = !(isWord(value, "false", "off") || (value && "punct" in value && value.punct === "0"));
      }
    }
    i++;
  }
  const target = tokens[i];
  if (!isWord(target, "index", "table")) return null;
  i++;
  if (isWord(tokens[i], "concurrently")) {
    concurrently = true;
    i++;
  }
  if (!concurrently) return null;
  const name = qualifiedName(tokens, i);
  if (!name) return null;
  return {
    kind: "reindex",
    target: (target as { word: "index" | "table" }).word,
    name: name.parts.map(quoteIdent).join("."),
  };
}
