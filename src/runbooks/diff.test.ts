import { describe, expect, it } from 'vitest';
import { MAX_EDIT_DISTANCE, splitLines, unifiedDiff } from './diff.js';

const labels = { fromLabel: 'version 1', toLabel: 'version 2' };
const diff = (from: string, to: string, context?: number) => unifiedDiff(from, to, context === undefined ? labels : { ...labels, context });
const lines = (...texts: string[]) => texts.map((t) => `${t}\n`).join('');

/** Applies a unified diff as patch(1) would, checking every context and removed line against `from`. */
function apply(from: string, patch: string): string {
  const source = splitLines(from);
  const out: string[] = [];
  let at = 0;
  const rows = patch.split('\n').slice(2, -1);
  for (let i = 0; i < rows.length; i += 1) {
    const row = rows[i]!;
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(row);
    if (hunk) {
      const start = hunk[2] === '0' ? Number(hunk[1]) : Number(hunk[1]) - 1;
      out.push(...source.slice(at, start));
      at = start;
      continue;
    }
    const noNewline = rows[i + 1] === '\\ No newline at end of file';
    const line = row.slice(1) + (noNewline ? '' : '\n');
    if (noNewline) i += 1;
    if (row[0] === '+') out.push(line);
    else {
      expect(source[at], `line ${at + 1}`).toBe(line);
      if (row[0] === ' ') out.push(line);
      at += 1;
    }
  }
  return [...out, ...source.slice(at)].join('');
}

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(diff('echo hi\n', 'echo hi\n')).toBe('');
  });

  it('shows changed lines with three lines of context, as diff -u', () => {
    const from = lines('#!/bin/bash', 'unit=$1', 'systemctl restart "$unit"', 'sleep 5', 'systemctl is-active "$unit"', 'journalctl -u "$unit" -n 20', 'exit 0');
    const to = lines('#!/bin/bash', 'set -euo pipefail', 'unit=$1', 'systemctl restart "$unit"', 'sleep 10', 'systemctl is-active "$unit"', 'journalctl -u "$unit" -n 20', 'exit 0');
    expect(diff(from, to)).toBe([
      '--- version 1',
      '+++ version 2',
      '@@ -1,7 +1,8 @@',
      ' #!/bin/bash',
      '+set -euo pipefail',
      ' unit=$1',
      ' systemctl restart "$unit"',
      '-sleep 5',
      '+sleep 10',
      ' systemctl is-active "$unit"',
      ' journalctl -u "$unit" -n 20',
      ' exit 0',
      '',
    ].join('\n'));
  });

  it('makes a hunk per change when they are more than twice the context apart, and joins them otherwise', () => {
    const from = lines('1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12');
    expect(diff(from, from.replace('2\n', 'two\n').replace('11\n', 'eleven\n'))).toBe([
      '--- version 1', '+++ version 2',
      '@@ -1,5 +1,5 @@', ' 1', '-2', '+two', ' 3', ' 4', ' 5',
      '@@ -8,5 +8,5 @@', ' 8', ' 9', ' 10', '-11', '+eleven', ' 12', '',
    ].join('\n'));
    // Six unchanged lines between the changes: one hunk.
    expect(diff(from, from.replace('2\n', 'two\n').replace('9\n', 'nine\n'))).toMatch(/^--- version 1\n\+\+\+ version 2\n@@ -1,12 \+1,12 @@\n/);
    expect(diff(from, from.replace('6\n', 'six\n'), 0)).toBe('--- version 1\n+++ version 2\n@@ -6 +6 @@\n-6\n+six\n');
  });

  it('numbers an empty side as diff -u does: the line before it, count 0', () => {
    expect(diff('', lines('a', 'b'))).toBe('--- version 1\n+++ version 2\n@@ -0,0 +1,2 @@\n+a\n+b\n');
    expect(diff(lines('a', 'b', 'c'), lines('a', 'c'))).toBe('--- version 1\n+++ version 2\n@@ -1,3 +1,2 @@\n a\n-b\n c\n');
    expect(diff(lines('a'), lines('a', 'b'), 0)).toBe('--- version 1\n+++ version 2\n@@ -1,0 +2 @@\n+b\n');
  });

  it('marks a last line without a line feed, also when only the line feed changed', () => {
    expect(diff('echo 1\necho 2\n', 'echo 1\necho 2')).toBe('--- version 1\n+++ version 2\n@@ -1,2 +1,2 @@\n echo 1\n-echo 2\n+echo 2\n\\ No newline at end of file\n');
    expect(diff('a\nb', 'a\nc')).toBe('--- version 1\n+++ version 2\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n');
  });

  it('keeps carriage returns and trailing blanks as part of the line', () => {
    expect(diff('a\r\nb \n', 'a\nb\n')).toBe('--- version 1\n+++ version 2\n@@ -1,2 +1,2 @@\n-a\r\n-b \n+a\n+b\n');
  });

  it('finds the shortest edit: one line moved is one removal and one insertion', () => {
    const from = lines('a', 'b', 'c', 'd', 'e', 'f');
    const to = lines('b', 'c', 'd', 'e', 'f', 'a');
    const text = diff(from, to);
    expect(text.split('\n').filter((row) => /^[-+][^-+]/.test(row))).toEqual(['-a', '+a']);
    expect(apply(from, text)).toBe(to);
  });

  it('gives a diff that turns one text into the other, for many random pairs', () => {
    let seed = 20;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const words = ['fi', 'done', '', 'echo $HostName', 'exit 1'];
    const text = () => Array.from({ length: random(25) }, () => `${words[random(words.length)]!}\n`).join('') + (random(3) === 0 ? 'tail' : '');
    for (let i = 0; i < 500; i += 1) {
      const from = text();
      const to = random(2) === 0 ? text() : from.replace(/\n/, random(2) === 0 ? '\nadded\n' : '');
      expect(apply(from, diff(from, to))).toBe(to);
    }
  });

  it('past the largest edit it searches for, shows the changed middle removed whole then added whole', () => {
    // Every odd line changed: the shortest edit is a removal and an insertion per odd line.
    const pair = (count: number) => [
      Array.from({ length: count }, (_, i) => `echo a${i}\n`).join(''),
      Array.from({ length: count }, (_, i) => `echo ${i % 2 === 0 ? 'a' : 'b'}${i}\n`).join(''),
    ] as const;
    const changedRows = (text: string) => text.split('\n').filter((row) => /^[-+][^-+]/.test(row));
    const [atLimitFrom, atLimitTo] = pair(MAX_EDIT_DISTANCE);
    expect(changedRows(diff(atLimitFrom, atLimitTo))).toHaveLength(MAX_EDIT_DISTANCE);

    const [from, to] = pair(MAX_EDIT_DISTANCE + 2);
    const text = diff(from, to);
    const changed = changedRows(text);
    // Line 1 is the same in both, so the middle is lines 2 to the end.
    expect(changed).toHaveLength(2 * (MAX_EDIT_DISTANCE + 1));
    expect(changed[0]).toBe('-echo a1');
    expect(changed[MAX_EDIT_DISTANCE + 1]).toBe('+echo b1');
    expect(apply(from, text)).toBe(to);
  });
});
