import { describe, expect, it } from 'vitest';
import { diffCounts, diffLines } from './diff';

describe('diffLines', () => {
  it('tells headers, hunks, added, removed, context and notes apart', () => {
    const lines = diffLines('--- version 1\n+++ version 2\n@@ -1,3 +1,3 @@\n #!/bin/sh\n-set -e\n+set -eu\n df -h /\n\\ No newline at end of file\n');
    expect(lines.map((line) => line.kind)).toEqual(['header', 'header', 'hunk', 'context', 'del', 'add', 'context', 'note']);
    expect(lines[4]!.text).toBe('-set -e');
    expect(diffCounts(lines)).toEqual({ added: 1, removed: 1 });
  });

  it('reads "--- " and "+++ " inside a hunk as a removed and an added line', () => {
    const lines = diffLines('--- version 1\n+++ version 2\n@@ -1 +1 @@\n--- a comment\n+++ a comment\n');
    expect(lines.slice(3).map((line) => line.kind)).toEqual(['del', 'add']);
  });

  it('has no lines for equal scripts', () => {
    expect(diffLines('')).toEqual([]);
  });
});
