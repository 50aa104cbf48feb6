// Pure: the word a person most likely meant among some candidates (a flag, a command, a table),
// for messages that say `did you mean ...?`. In lib, below every layer that names things, so
// that a command can suggest without importing the command table (src/cli/did-you-mean.ts).

/** Pure: the optimal-string-alignment distance (a swap of neighbours counts one edit, as typists make it). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * Pure: the candidates `word` most likely meant, nearest first (at most two, when they tie):
 * within a third of its length in edits (one at least), or the one candidate it begins or
 * ends (`--unconfirmed` for `--max-unconfirmed`). None when nothing is near.
 */
export function nearest(word: string, candidates: readonly string[]): string[] {
  const bare = (s: string) => s.replace(/^-+/, '').toLowerCase();
  const w = bare(word);
  if (w === '') return [];
  const limit = Math.max(1, Math.floor(w.length / 3));
  const scored = candidates.map((c) => ({ c, d: editDistance(w, bare(c)) })).filter((s) => s.d <= limit);
  if (scored.length > 0) {
    const best = Math.min(...scored.map((s) => s.d));
    return scored.filter((s) => s.d === best).slice(0, 2).map((s) => s.c);
  }
  const partial = w.length >= 3 ? candidates.filter((c) => bare(c).startsWith(w) || bare(c).endsWith(w)) : [];
  return partial.length === 1 ? partial : [];
}

/** Pure: `did you mean --a?` / `did you mean --a or --b?`; '' for none. */
export function didYouMean(meant: readonly string[]): string {
  return meant.length === 0 ? '' : `did you mean ${meant.join(' or ')}?`;
}

