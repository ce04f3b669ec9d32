/** The value of each hex digit by character code (0-9, a-f, A-F); every other code is never looked up. */
const DIGIT_VALUES = new Uint8Array(128);
for (let digit = 0; digit < 16; digit++) {
  DIGIT_VALUES[digit.toString(16).charCodeAt(0)] = digit;
  DIGIT_VALUES[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;
}

/**
 * The bytes of an even-length hex string already checked by the caller's pattern (only 0-9, a-f, A-F).
 * Decoded by character code through a table: slicing and parseInt per byte cost several times as much,
 * on every signed delivery.
 */
export function hexBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) {
    const high = DIGIT_VALUES[hex.charCodeAt(2 * i)] as number;
    const low = DIGIT_VALUES[hex.charCodeAt(2 * i + 1)] as number;
    bytes[i] = (high << 4) | low;
  }
  return bytes;
}
