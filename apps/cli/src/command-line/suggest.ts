/**
 * The known word nearest to a misspelled one, for "did you mean `list`?": the fewest single-character
 * edits (insert, delete, replace, swap two neighbours), at most a third of the word's length (at least 1),
 * or a word that starts with what was typed. `null` when nothing is near enough.
 */
export function nearest(typed: string, known: readonly string[]): string | null {
  if (typed === "") return null;
  const limit = Math.max(1, Math.floor(typed.length / 3));
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const word of known) {
    if (word === typed) return word;
    const distance = editDistance(typed.toLowerCase(), word.toLowerCase());
    if (distance <= limit && distance < bestDistance) {
      best = word;
      bestDistance = distance;
    }
  }
  if (best !== null) return best;
  const prefixed = known.filter((word) => typed.length >= 2 && word.startsWith(typed));
  return prefixed.length === 1 ? prefixed[0]! : null;
}

/** Optimal string alignment distance (Levenshtein plus swaps of two neighbouring characters). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        d[(i - 1) * cols + j]! + 1,
        d[i * cols + j - 1]! + 1,
        d[(i - 1) * cols + j - 1]! + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, d[(i - 2) * cols + j - 2]! + 1);
      }
      d[i * cols + j] = value;
    }
  }
  return d[rows * cols - 1]!;
}
