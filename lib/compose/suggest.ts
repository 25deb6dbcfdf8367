/**
 * "Did you mean": the closest known word to a misspelt one, by edit distance, for config errors.
 */

/**
 * Edit distance (optimal string alignment): insertions, deletions, substitutions and swaps of two
 * neighbouring letters (`nmae` for `name`) each cost 1. Three rows, no recursion.
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      let distance = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, before[j - 2]! + 1);
      current.push(distance);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known word closest to `word` when it is close enough to be a slip: a different case, or at most a
 * third of its letters (at least one) edited. The first of equally close words wins.
 */
export function closest(word: string, known: Iterable<string>): string | undefined {
  // Words much longer than any key are not slips: comparing them would only cost time.
  if (word.length > 64) return undefined;
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === word.toLowerCase() ? 0.5 : editDistance(word, candidate);
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
