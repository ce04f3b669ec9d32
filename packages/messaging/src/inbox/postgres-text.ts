/**
 * Text PostgreSQL refuses: jsonb holds no U+0000 and no unpaired surrogate, in a key as in a value, and text
 * holds no U+0000. A message carrying one would make its whole shared commit fail, and fail again on every
 * redelivery, taking the other deliveries of each batch down with it; so each is stored as U+FFFD instead.
 */

// JSON.stringify writes U+0000 as `\u0000` and an unpaired surrogate as `\udXXX` (lower-case hex), and writes
// every other character of those ranges as itself. Such an escape starts a run of backslashes of odd length:
// in `\\u0000` the backslash is escaped and `u0000` is text, which the look-behind and the pairs leave alone.
const REFUSED_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `value` as JSON text that PostgreSQL's jsonb accepts. Made by JSON.stringify without a replacer (a replacer
 * takes it off its fast path, on every delivery) and mended only when the text holds an escape at all.
 */
export function jsonForPostgres(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes("\\u") ? text.replace(REFUSED_ESCAPE, "$1\uFFFD") : text;
}

/** `text` as PostgreSQL stores it through jsonForPostgres. */
export function textForPostgres(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD").replace(UNPAIRED_SURROGATE, "\uFFFD");
}
