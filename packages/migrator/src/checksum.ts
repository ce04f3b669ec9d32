import { createHash } from "node:crypto";
import type { Migration } from "./types.js";

/** sha256 of a migration's source text; line endings are normalised so a CRLF checkout does not read as drift. */
export function checksum(source: string): string {
  return createHash("sha256").update(source.replace(/\r\n/g, "\n")).digest("hex");
}

/** The checksum recorded for a migration in the history. */
export function checksumOf(migration: Migration): string {
  return checksum(migration.source ?? codeFingerprint(migration.up.toString()));
}

// Punctuation that printers add or drop freely (`(sql) =>` vs `sql =>`, trailing `;` and `,`).
const LAYOUT = /[\s;,()]/;

/**
 * The part of a function's text that survives recompilation. The same migration run through tsx, tsup or
 * vitest prints with different whitespace, quotes, semicolons and parentheses; string and template text
 * (the SQL) is kept exactly, comments and layout punctuation outside it are dropped.
 */
export function codeFingerprint(code: string): string {
  let out = "";
  // One entry per open template literal: the brace depth of the `${ ... }` we are inside, or -1 in its text.
  const templates: number[] = [];
  let i = 0;
  while (i < code.length) {
    const c = code[i] as string;
    const depth = templates[templates.length - 1];
    if (depth === -1) {
      // Inside template text: copy verbatim until the closing backtick or a substitution.
      if (c === "\\") {
        out += code.slice(i, i + 2);
        i += 2;
      } else if (c === "`") {
        out += c;
        templates.pop();
        i++;
      } else if (c === "$" && code[i + 1] === "{") {
        out += "${";
        templates[templates.length - 1] = 0;
        i += 2;
      } else {
        out += c;
        i++;
      }
      continue;
    }
    if (c === "`") {
      out += c;
      templates.push(-1);
      i++;
    } else if (c === '"' || c === "'") {
      let end = i + 1;
      let text = "";
      while (end < code.length && code[end] !== c) {
        if (code[end] === "\\") {
          const next = code[end + 1] ?? "";
          text += next === '"' || next === "'" ? next : `\\${next}`;
          end += 2;
        } else {
          text += code[end];
          end++;
        }
      }
      out += JSON.stringify(text);
      i = end + 1;
    } else if (c === "/" && code[i + 1] === "/") {
      const end = code.indexOf("\n", i);
      i = end === -1 ? code.length : end;
    } else if (c === "/" && code[i + 1] === "*") {
      const end = code.indexOf("*/", i + 2);
      i = end === -1 ? code.length : end + 2;
    } else if (LAYOUT.test(c)) {
      // Any layout between two words becomes one space (`await sql`, `if(x`, `a\nb` after ASI vs `a;b`).
      while (i < code.length && LAYOUT.test(code[i] as string)) i++;
      if (/[\w$]$/.test(out) && /^[\w$]/.test(code[i] ?? "")) out += " ";
    } else {
      if (depth !== undefined && depth >= 0) {
        if (c === "{") templates[templates.length - 1] = depth + 1;
        else if (c === "}") {
          if (depth === 0) templates[templates.length - 1] = -1;
          else templates[templates.length - 1] = depth - 1;
        }
      }
      out += c;
      i++;
    }
  }
  return out;
}
