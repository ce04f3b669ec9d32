import { ruleById } from "./rules.js";

/** The comment that silences findings on the statement after it. */
export const SILENCE_MARKER = "platform-migrate-lint-ignore";

export interface Silence {
  /** Byte offset of the comment. */
  readonly at: number;
  readonly rules: readonly string[];
}

export interface SilenceProblem {
  readonly at: number;
  readonly message: string;
}

export interface Trivia {
  /** Byte offset of the first character that is neither white space nor a comment (or `end`). */
  readonly firstToken: number;
  readonly silences: Silence[];
  readonly problems: SilenceProblem[];
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d, 0x0c, 0x0b]);
const SEMICOLON = 0x3b;

/**
 * Reads the white space and comments from `start` up to the first token (no string literal can come
 * before it, so this needs no lexer), collecting silence comments. With `skipSemicolons`, `;` counts as
 * trivia too: used for the text after the last statement.
 */
export function readTrivia(bytes: Buffer, start: number, end: number, skipSemicolons = false): Trivia {
  const silences: Silence[] = [];
  const problems: SilenceProblem[] = [];
  let i = start;
  while (i < end) {
    const byte = bytes[i] as number;
    if (SPACE.has(byte) || (skipSemicolons && byte === SEMICOLON)) {
      i++;
    } else if (byte === 0x2d && bytes[i + 1] === 0x2d) {
      const newline = bytes.indexOf(0x0a, i);
      const lineEnd = newline === -1 || newline > end ? end : newline;
      readSilence(bytes.subarray(i + 2, lineEnd).toString("utf8"), i, silences, problems);
      i = lineEnd;
    } else if (byte === 0x2f && bytes[i + 1] === 0x2a) {
      // Block comments nest in PostgreSQL.
      let depth = 1;
      i += 2;
      while (i < end && depth > 0) {
        if (bytes[i] === 0x2f && bytes[i + 1] === 0x2a) {
          depth++;
          i += 2;
        } else if (bytes[i] === 0x2a && bytes[i + 1] === 0x2f) {
          depth--;
          i += 2;
        } else i++;
      }
    } else break;
  }
  return { firstToken: Math.min(i, end), silences, problems };
}

/** `-- platform-migrate-lint-ignore <rule-id>[, <rule-id>...]: <reason>` */
function readSilence(comment: string, at: number, silences: Silence[], problems: SilenceProblem[]): void {
  const text = comment.trim();
  if (!text.startsWith(SILENCE_MARKER)) return;
  const rest = text.slice(SILENCE_MARKER.length);
  const colon = rest.indexOf(":");
  if (!/^\s/.test(rest) || colon === -1 || rest.slice(colon + 1).trim() === "") {
    problems.push({
      at,
      message: `a silence needs rule ids and a reason: -- ${SILENCE_MARKER} <rule-id>: <why this is safe here>`,
    });
    return;
  }
  const rules = rest
    .slice(0, colon)
    .split(",")
    .map((id) => id.trim());
  for (const id of rules) {
    const rule = ruleById(id);
    if (!rule) problems.push({ at, message: `unknown rule id ${JSON.stringify(id)} in a silence` });
    else if (!rule.silenceable) problems.push({ at, message: `${id} cannot be silenced` });
  }
  silences.push({ at, rules });
}
