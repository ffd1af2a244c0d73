import { describe, expect, it } from 'vitest';
import { judgePath, parseTree, pathWithFolders, type TreeEntry } from './tree.js';

const oid = 'a'.repeat(40);
const entry = (mode: string, path: string, size?: number): TreeEntry => ({ mode, oid, size, path });

describe('parseTree', () => {
  it('reads ls-tree -z -l records, paths with blanks and tabs included, and drops one cut off', () => {
    const output = Buffer.from([
      `040000 tree ${oid}       -\trunbooks`,
      `100755 blob ${oid}    1234\trunbooks/with space\tand tab.sh`,
      `120000 blob ${oid}       8\tlink`,
      `160000 commit ${oid}       -\tvendor`,
      `100644 blob ${oid}      1\tcut-off`,
    ].join('\0').slice(0, -3));
    expect(parseTree(output)).toEqual([
      entry('040000', 'runbooks'),
      entry('100755', 'runbooks/with space\tand tab.sh', 1234),
      entry('120000', 'link', 8),
      entry('160000', 'vendor'),
    ]);
    expect(parseTree(Buffer.from(`100644 blob ${oid}\tx.sh\0`))).toEqual([entry('100644', 'x.sh')]);
  });
});

describe('judgePath', () => {
  const tree = [
    entry('040000', 'runbooks'), entry('100644', 'runbooks/disk.sh', 10), entry('100755', 'runbooks/big.sh', 300_000),
    entry('120000', 'linked', 8), entry('160000', 'vendor'), entry('100644', 'file.sh', 3), entry('120000', 'link.sh', 16),
    entry('100644', 'odd', 1),
  ];
  it('passes a regular file whose folders are real folders', () => {
    expect(pathWithFolders('a/b/c.sh')).toEqual(['a', 'a/b', 'a/b/c.sh']);
    expect(judgePath(tree, 'runbooks/disk.sh', 256 * 1024)).toEqual({ ok: tree[1] });
    expect(judgePath(tree, 'file.sh', 256 * 1024)).toEqual({ ok: tree[5] });
  });

  it.each([
    ['missing.sh', 'path_missing', 'does not exist'],
    ['nope/x.sh', 'path_missing', 'does not exist (there is no folder nope)'],
    ['file.sh/x.sh', 'path_missing', 'does not exist (file.sh is a file, not a folder)'],
    ['runbooks', 'not_a_file', 'is a folder; give the path of the script file in it'],
    ['linked/disk.sh', 'symlink', expect.stringMatching(/^goes through linked, which is a symbolic link/)],
    ['link.sh', 'symlink', expect.stringMatching(/^is a symbolic link/)],
    ['vendor', 'not_a_file', 'is a submodule (another repository), not a file'],
    ['vendor/x.sh', 'not_a_file', expect.stringMatching(/^is inside vendor, which is a submodule/)],
    ['runbooks/big.sh', 'too_big', 'is 293.0 KiB (300000 bytes); a runbook may be at most 256 KiB'],
  ])('refuses %s as %s', (path, problem, what) => {
    expect(judgePath(tree, path, 256 * 1024)).toEqual({ problem, what });
  });

  it('refuses an entry of a mode git does not write for files', () => {
    expect(judgePath([entry('100664', 'odd', 1)], 'odd', 10)).toEqual({ problem: 'not_a_file', what: 'is not a regular file (mode 100664)' });
  });
});
