/** Where the first byte that breaks strict UTF-8 sits, or `null` when the bytes are valid UTF-8. */
export interface Utf8Error {
  /** Byte offset from the start of the buffer. */
  offset: number;
  /** 1-based line of that byte (lines end at `\n`). */
  line: number;
  /** 1-based byte column within that line. */
  column: number;
  /** The offending byte. */
  byte: number;
}

/**
 * Finds the first invalid byte under the strict UTF-8 rules (RFC 3629): no overlong forms, no surrogates,
 * nothing above U+10FFFF, no truncated sequences. A truncated or broken sequence is reported at its
 * first byte.
 */
export function findInvalidUtf8(bytes: Uint8Array): Utf8Error | null {
  let line = 1;
  let lineStart = 0;
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      if (b === 0x0a) {
        line++;
        lineStart = i + 1;
      }
      i++;
      continue;
    }
    const length = sequenceLength(bytes, i);
    if (length === 0) return { offset: i, line, column: i - lineStart + 1, byte: b };
    i += length;
  }
  return null;
}

/** Length of the valid multi-byte sequence starting at `i`, or 0. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i]!;
  const at = (k: number): number => (i + k < bytes.length ? bytes[i + k]! : -1);
  const cont = (x: number): boolean => x >= 0x80 && x <= 0xbf;
  if (b >= 0xc2 && b <= 0xdf) return cont(at(1)) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const b1 = at(1);
    const low = b === 0xe0 ? 0xa0 : 0x80;
    const high = b === 0xed ? 0x9f : 0xbf;
    return b1 >= low && b1 <= high && cont(at(2)) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const b1 = at(1);
    const low = b === 0xf0 ? 0x90 : 0x80;
    const high = b === 0xf4 ? 0x8f : 0xbf;
    return b1 >= low && b1 <= high && cont(at(2)) && cont(at(3)) ? 4 : 0;
  }
  return 0;
}
