/** A line of a unified diff, by what it says: `header` (--- / +++), `hunk` (@@), `add`, `del`, `context`, `note` (\ No newline…). */
export type DiffLineKind = 'header' | 'hunk' | 'add' | 'del' | 'context' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

const MARKS: Record<string, DiffLineKind> = { '@': 'hunk', '+': 'add', '-': 'del', ' ': 'context', '\\': 'note' };

/**
 * The lines of a unified diff as `diff -u` writes it (docs/runbooks.md). Only the first two lines
 * are the file headers: inside a hunk, "--- x" is a removed line "-- x".
 */
export function diffLines(diff: string): DiffLine[] {
  const lines = diff.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((text, i) => {
    if (i < 2 && (text.startsWith('--- ') || text.startsWith('+++ '))) return { kind: 'header', text };
    return { kind: MARKS[text[0] ?? ' '] ?? 'context', text };
  });
}

/** How many lines the diff adds and removes. */
export function diffCounts(lines: DiffLine[]): { added: number; removed: number } {
  return { added: lines.filter((line) => line.kind === 'add').length, removed: lines.filter((line) => line.kind === 'del').length };
}
