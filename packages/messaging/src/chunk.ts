/**
 * Splits `text` into parts of at most `limit` characters (Unicode code points, so a surrogate pair is never
 * cut). Text within the limit comes back as is; longer text becomes parts numbered `(i/n) `, the number
 * counted into the limit. A part ends at the last whitespace in its second half when there is one.
 */
export function splitIntoNumberedChunks(text: string, limit: number): string[] {
  const chars = Array.from(text);
  if (chars.length <= limit) return [text];
  for (let digits = 1; ; digits++) {
    const widestPrefix = `(${"9".repeat(digits)}/${"9".repeat(digits)}) `.length;
    if (widestPrefix >= limit) throw new RangeError(`limit ${limit} is too small to number the parts`);
    const parts = splitAtWhitespace(chars, limit - widestPrefix);
    if (String(parts.length).length <= digits) {
      return parts.map((part, index) => `(${index + 1}/${parts.length}) ${part}`);
    }
  }
}

function splitAtWhitespace(chars: string[], size: number): string[] {
  const parts: string[] = [];
  let start = 0;
  while (chars.length - start > size) {
    let cut = start + size;
    let next = cut;
    for (let i = start + size; i > start + size / 2; i--) {
      if (/\s/.test(chars[i] ?? "")) {
        cut = i;
        next = i + 1;
        break;
      }
    }
    parts.push(chars.slice(start, cut).join(""));
    start = next;
  }
  parts.push(chars.slice(start).join(""));
  return parts;
}
