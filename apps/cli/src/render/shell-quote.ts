/**
 * A word as a POSIX shell (bash, zsh) reads it back unchanged: as it is when it holds only safe characters,
 * in single quotes otherwise, and in `$'…'` with escapes when it holds control characters, so that a
 * suggested command stays on one line and can be pasted.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_\-./:=@%+,]+$/.test(word)) return word;
  if (!/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(word)) return `'${word.replace(/'/g, "'\\''")}'`;
  const escaped = word.replace(/[\\'\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === "\\" || c === "'") return `\\${c}`;
    if (c === "\n") return "\\n";
    if (c === "\t") return "\\t";
    if (c === "\r") return "\\r";
    const code = c.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return `$'${escaped}'`;
}
