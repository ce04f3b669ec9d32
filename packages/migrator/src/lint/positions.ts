/** A 1-based line and a 1-based column counted in characters (Unicode code points), as editors show them. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/**
 * Maps PostgreSQL's offsets into a file's text to lines and columns. The parser reports node locations as
 * byte offsets into the UTF-8 text, and error cursors as character offsets; JavaScript strings index UTF-16
 * units. All three differ once the text holds a non-ASCII character.
 */
export class SourcePositions {
  readonly bytes: Buffer;
  /** Byte offset of the start of each line. */
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string) {
    this.bytes = Buffer.from(text, "utf8");
    for (let i = 0; i < this.bytes.length; i++) {
      if (this.bytes[i] === 0x0a) this.lineStarts.push(i + 1);
    }
  }

  /** Line and column of a UTF-8 byte offset (clamped to the text). */
  atByte(offset: number): Position {
    const byte = Math.max(0, Math.min(offset, this.bytes.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.lineStarts[middle] as number) <= byte) low = middle;
      else high = middle - 1;
    }
    const start = this.lineStarts[low] as number;
    const column = [...this.bytes.subarray(start, byte).toString("utf8")].length + 1;
    return { line: low + 1, column };
  }

  /** Line and column of a 0-based character (code point) offset, as in the parser's error cursor. */
  atCharacter(offset: number): Position {
    let byte = 0;
    let characters = 0;
    for (const character of this.text) {
      if (characters >= offset) break;
      byte += Buffer.byteLength(character, "utf8");
      characters++;
    }
    return this.atByte(byte);
  }

  /** The text between two byte offsets. */
  slice(start: number, end: number): string {
    return this.bytes.subarray(start, end).toString("utf8");
  }
}
