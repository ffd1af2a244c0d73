/**
 * Line diffs of runbook scripts, as unified diffs (the `diff -u` format: `---`/`+++` headers,
 * `@@ -l,s +l,s @@` hunks, "\ No newline at end of file"). Myers' O(ND) algorithm ("An O(ND)
 * Difference Algorithm and Its Variations", 1986) on the lines between the common head and tail.
 */

export interface DiffOptions {
  fromLabel: string;
  toLabel: string;
  /** Unchanged lines shown around each change; 3, as diff -u. */
  context?: number;
}

type Op = { kind: ' ' | '-' | '+'; line: string };

/**
 * Past this many inserted plus deleted lines (the trace takes memory in the square of it), or this
 * many line comparisons (time: long runs of equal lines walked again on many diagonals), the
 * shortest edit is not searched for further: the changed middle is shown removed whole, then added
 * whole. The diff is still exact, only not the shortest.
 */
export const MAX_EDIT_DISTANCE = 1000;
const MAX_COMPARISONS = 20_000_000;

/** The unified diff turning `from` into `to`; '' when they are equal. */
export function unifiedDiff(from: string, to: string, options: DiffOptions): string {
  if (from === to) return '';
  const ops = lineOps(splitLines(from), splitLines(to));
  const context = options.context ?? 3;
  const out = [`--- ${options.fromLabel}`, `+++ ${options.toLabel}`];
  // Line numbers before each op, counted once: a hunk's header starts from them.
  let fromLine = 0;
  let toLine = 0;
  let counted = 0;
  for (const [start, end] of hunkRanges(ops, context)) {
    for (; counted < start; counted += 1) {
      if (ops[counted]!.kind !== '+') fromLine += 1;
      if (ops[counted]!.kind !== '-') toLine += 1;
    }
    const hunk = ops.slice(start, end);
    const fromCount = hunk.filter((op) => op.kind !== '+').length;
    const toCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${range(fromLine, fromCount)} +${range(toLine, toCount)} @@`);
    for (const op of hunk) {
      if (op.line.endsWith('\n')) out.push(op.kind + op.line.slice(0, -1));
      else out.push(op.kind + op.line, '\\ No newline at end of file');
    }
  }
  return `${out.join('\n')}\n`;
}

/** Lines with their own line feed; the last has none when the text does not end with one. */
export function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

/** diff -u's range: the first line and the count, the count left out when 1; an empty range names the line before it. */
function range(before: number, count: number): string {
  if (count === 0) return `${before},0`;
  return count === 1 ? `${before + 1}` : `${before + 1},${count}`;
}

/** [start, end) of each hunk in `ops`: changes with `context` lines around, joined when their contexts touch. */
function hunkRanges(ops: Op[], context: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  ops.forEach((op, i) => {
    if (op.kind === ' ') return;
    const start = Math.max(0, i - context);
    const end = Math.min(ops.length, i + 1 + context);
    const last = ranges.at(-1);
    if (last && start <= last[1]) last[1] = end;
    else ranges.push([start, end]);
  });
  return ranges;
}

function lineOps(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const aMid = a.slice(head, a.length - tail);
  const bMid = b.slice(head, b.length - tail);
  const same = (line: string): Op => ({ kind: ' ', line });
  const middle = myers(aMid, bMid) ?? [...aMid.map((line): Op => ({ kind: '-', line })), ...bMid.map((line): Op => ({ kind: '+', line }))];
  return [...a.slice(0, head).map(same), ...middle, ...a.slice(a.length - tail).map(same)];
}

/** The shortest edit from a to b, or undefined past MAX_EDIT_DISTANCE or MAX_COMPARISONS. */
function myers(aLines: string[], bLines: string[]): Op[] | undefined {
  // Lines as numbers: comparing them along every diagonal is then one integer compare.
  const ids = new Map<string, number>();
  const intern = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) {
      id = ids.size;
      ids.set(line, id);
    }
    return id;
  };
  const a = aLines.map(intern);
  const b = bLines.map(intern);
  const n = a.length;
  const m = b.length;
  const limit = Math.min(n + m, MAX_EDIT_DISTANCE);
  // v[limit + k]: the furthest x reached on diagonal k (x - y = k); trace[d] keeps v[-d..d] after step d.
  const v = new Int32Array(2 * limit + 3);
  const trace: Int32Array[] = [];
  let comparisons = 0;
  for (let d = 0; d <= limit && comparisons <= MAX_COMPARISONS; d += 1) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[limit + k - 1]! < v[limit + k + 1]!) ? v[limit + k + 1]! : v[limit + k - 1]! + 1;
      let y = x - k;
      const start = x;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      comparisons += x - start + 1;
      v[limit + k] = x;
      if (x >= n && y >= m) {
        trace.push(v.slice(limit - d, limit + d + 1));
        return backtrack(trace, aLines, bLines);
      }
    }
    trace.push(v.slice(limit - d, limit + d + 1));
  }
  return undefined;
}

/** Walks the trace back from (n, m) to (0, 0): each step one insertion or deletion after a run of equal lines. */
function backtrack(trace: Int32Array[], a: string[], b: string[]): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d > 0; d -= 1) {
    const previous = trace[d - 1]!;
    const at = (k: number) => previous[k + d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const previousK = down ? k + 1 : k - 1;
    const previousX = at(previousK);
    const previousY = previousX - previousK;
    while (x > previousX + (down ? 0 : 1) && y > previousY + (down ? 1 : 0)) {
      x -= 1;
      y -= 1;
      ops.push({ kind: ' ', line: a[x]! });
    }
    if (down) ops.push({ kind: '+', line: b[previousY]! });
    else ops.push({ kind: '-', line: a[previousX]! });
    x = previousX;
    y = previousY;
  }
  while (x > 0) {
    x -= 1;
    ops.push({ kind: ' ', line: a[x]! });
  }
  return ops.reverse();
}
