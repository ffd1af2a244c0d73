import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pinnedCommit, refProblem, runbookPathProblem } from './names.js';

/** What git itself says of a ref name: the rules refProblem follows. */
function gitTakes(ref: string): boolean {
  try {
    execFileSync('git', ['check-ref-format', '--allow-onelevel', ref], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('refProblem', () => {
  it.each([
    'main', 'release/9', 'v1.2.0', 'feature/JIRA-12_fix', 'refs/heads/main', 'refs/tags/v1', 'a@b', 'tag+build', 'ümlaut',
  ])('takes %s, as git check-ref-format does', (ref) => {
    expect(refProblem(ref)).toBeUndefined();
    expect(gitTakes(ref)).toBe(true);
  });

  it.each([
    ['a..b'], ['a b'], ['a~1'], ['a^'], ['a:b'], ['a?'], ['a*'], ['a[b'], ['a\\b'], ['/a'], ['a/'], ['a//b'], ['a.'], ['.a'], ['a/.b'],
    ['a.lock'], ['a/b.lock/c'], ['a@{1}'], ['@'], ['a\tb'], ['a\u007fb'],
  ])('refuses %j, as git check-ref-format does', (ref) => {
    expect(refProblem(ref)).toEqual(expect.any(String));
    expect(gitTakes(ref)).toBe(false);
  });

  it('refuses what git would take for an option, an empty name and a full name outside branches and tags', () => {
    expect(refProblem('-upload-pack=x')).toMatch(/starts with "-"/);
    expect(refProblem('')).toMatch(/is empty/);
    expect(refProblem('refs/remotes/origin/main')).toMatch(/outside refs\/heads\/ and refs\/tags\//);
    expect(refProblem('x'.repeat(256))).toMatch(/longer than 255/);
  });
});

describe('commit ids as refs', () => {
  it('takes a whole commit id (SHA-1 or SHA-256), as the commit it pins, in lower case', () => {
    const sha1 = '0123456789abcdef0123456789abcdef01234567';
    for (const id of [sha1, sha1.toUpperCase(), 'ab'.repeat(32)]) {
      expect(refProblem(id)).toBeUndefined();
      expect(pinnedCommit(id)).toBe(id.toLowerCase());
    }
    expect(pinnedCommit('main')).toBeUndefined();
    expect(pinnedCommit('refs/heads/0123456789abcdef0123456789abcdef01234567')).toBeUndefined();
  });

  it.each(['1a2b3c4', '0123456789abcdef0123', 'DEADBEEF1', 'ab'.repeat(19) + '1'])('refuses %s, an abbreviated commit id, asking for the whole id or a tag', (ref) => {
    expect(refProblem(ref)).toBe(`looks like an abbreviated commit id; give the whole id (git rev-parse ${ref} prints it) to pin that commit, or tag the commit and give the tag (a branch named so is refs/heads/${ref})`);
  });

  it.each(['deadbeef', 'cafe', 'facade', 'release-2024', 'v1234567', 'refs/heads/1a2b3c4'])('takes %s, which no abbreviation looks like', (ref) => {
    expect(refProblem(ref)).toBeUndefined();
  });
});

describe('runbookPathProblem', () => {
  it.each(['disk.sh', 'runbooks/disk.sh', 'a/b/c/d.py', '.github/run.sh', 'runbooks/..hidden', 'runbooks/a..b.sh', 'with space.sh', 'ü/ñ.sh'])('takes %s', (path) => {
    expect(runbookPathProblem(path)).toBeUndefined();
  });

  it.each([
    ['', /is empty/],
    ['../etc/passwd', /"\.\." part/],
    ['runbooks/../../x', /"\.\." part/],
    ['runbooks/..', /"\.\." part/],
    ['./disk.sh', /"\." part/],
    ['/etc/passwd', /starts with "\/"/],
    ['runbooks//disk.sh', /"\/\/"/],
    ['runbooks/', /ends with "\/"/],
    ['runbooks\\disk.sh', /backslash/],
    ['disk.sh\u0000.txt', /NUL/],
    ['disk\n.sh', /control character/],
    ['a/'.repeat(2049), /longer than 4096/],
  ])('refuses %j', (path, message) => {
    expect(runbookPathProblem(path)).toMatch(message);
  });
});
