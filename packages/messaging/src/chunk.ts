/**
 * Splits `text` into parts of at most `limit` characters (Unicode code points, so a surrogate pair is never
 * cut). Text within the limit comes back as is; longer text becomes parts numbered `(i/n) `, the number
 * counted into the limit. A part ends at the last paragraph break in its second half, else the last line
 * break, else the last whitespace, else at the limit.
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
    const { cut, next } = findCut(chars, start, size);
    parts.push(chars.slice(start, cut).join(""));
    start = next;
  }
  parts.push(chars.slice(start).join(""));
  return parts;
}

/** Boundaries in order of preference; each says how many characters it drops at the cut. */
const BOUNDARIES: ((chars: string[], i: number) => number)[] = [
  (chars, i) => (chars[i] === "\n" && chars[i + 1] === "\n" ? 2 : 0),
  (chars, i) => (chars[i] === "\n" ? 1 : 0),
  (chars, i) => (/\s/.test(chars[i] ?? "") ? 1 : 0),
];

/** Where a part starting at `start` ends: the best boundary in its second half, else a hard cut. */
function findCut(chars: string[], start: number, size: number): { cut: number; next: number } {
  for (const boundary of BOUNDARIES) {
    for (let i = start + size; i > start + size / 2; i--) {
      const dropped = boundary(chars, i);
      if (dropped > 0) return { cut: i, next: i + dropped };
    }
  }
  return { cut: start + size, next: start + size };
}
