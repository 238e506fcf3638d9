/**
 * Flattens text taken from user files (names, messages, output) to one line with control characters
 * replaced, so workflow text can never forge a status line (clarification 4).
 */
export function oneLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, " ⏎ ").replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "\uFFFD");
}

/** Singular only for exactly one: `1 node`, `0 edges`, `2 warnings`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
