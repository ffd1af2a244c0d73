/**
 * The name among `known` that `name` was most likely meant to be: the same but for case, or the
 * nearest within a typo per four letters of the longer (at least one): `flavor` → `flavour`, `hostName` →
 * `hostname`, `windowSecs` → `windowSeconds`. None when nothing is that near, or when two are
 * equally near (a guess would mislead).
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const wanted = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  let tied = false;
  for (const candidate of known) {
    if (candidate === name) continue;
    const distance = editDistance(wanted, candidate.toLowerCase());
    const within = Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 4));
    if (distance > within || (best && distance > best.distance)) continue;
    tied = best?.distance === distance;
    if (!tied) best = { name: candidate, distance };
  }
  return tied ? undefined : best?.name;
}

/** Edits (insert, delete, replace, swap two neighbours) between two words: optimal string alignment. */
export function editDistance(a: string, b: string): number {
  let before = Array.from({ length: b.length + 1 }, () => 0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      row.push(value);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length]!;
}
