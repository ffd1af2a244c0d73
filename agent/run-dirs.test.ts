import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunDirs, type RunDir } from './run-dirs.js';
import { useTempDirs } from './testing/helpers.js';

const tempDir = useTempDirs();

describe('RunDirs', () => {
  it('makes a private run directory with an empty cwd, and hands it out again once given back untouched', async () => {
    const dirs = new RunDirs(await tempDir());
    const first = dirs.take('.sh', 'true');
    expect(readdirSync(first.path).sort()).toEqual(['cwd', 'script.sh']);
    expect(readdirSync(first.cwd)).toEqual([]);
    expect(readFileSync(first.script, 'utf8')).toBe('true');
    for (const path of [first.path, first.cwd, first.script]) expect(statSync(path).mode & 0o777).toBe(0o700);
    await dirs.giveBack(first, true);
    expect(dirs.take('.sh', 'true')).toEqual(first);
  });

  it('gives each run in progress its own directory', async () => {
    const dirs = new RunDirs(await tempDir());
    const taken = [dirs.take('.sh', 'true'), dirs.take('.sh', 'true'), dirs.take('.sh', 'true')];
    expect(new Set(taken.map((dir) => dir.path)).size).toBe(3);
  });

  it('removes a directory given back as not reusable (a process of the run is left)', async () => {
    const workDir = await tempDir();
    const dirs = new RunDirs(workDir);
    await dirs.giveBack(dirs.take('.sh', 'true'), false);
    expect(readdirSync(workDir)).toEqual([]);
  });

  const changes: Array<[string, (dir: RunDir) => void]> = [
    ['a file left in cwd', (dir) => writeFileSync(join(dir.cwd, 'left-behind'), 'x')],
    ['a directory left in cwd', (dir) => mkdirSync(join(dir.cwd, 'sub'))],
    ['a file left beside cwd', (dir) => writeFileSync(join(dir.path, 'notes.txt'), 'x')],
    ['the script file opened to others', (dir) => chmodSync(dir.script, 0o755)],
    ['the script file replaced by a link', (dir) => {
      unlinkSync(dir.script);
      symlinkSync('/etc/hostname', dir.script);
    }],
    ['cwd opened to others', (dir) => chmodSync(dir.cwd, 0o755)],
    ['the run directory opened to others', (dir) => chmodSync(dir.path, 0o777)],
    ['cwd replaced by a link', (dir) => {
      rmdirSync(dir.cwd);
      symlinkSync('/tmp', dir.cwd);
    }],
    ['cwd gone', (dir) => rmdirSync(dir.cwd)],
  ];

  for (const [what, change] of changes) {
    it(`never hands out a directory with ${what}: it is removed and a new one made`, async () => {
      const workDir = await tempDir();
      const dirs = new RunDirs(workDir);
      const first = dirs.take('.sh', 'true');
      change(first);
      await dirs.giveBack(first, true);
      const next = dirs.take('.sh', 'true');
      expect(next.path).not.toBe(first.path);
      expect(readdirSync(next.cwd)).toEqual([]);
      await waitGone(first.path);
      expect(readdirSync(workDir)).toEqual([next.path.slice(workDir.length + 1)]);
    });
  }

  it('keeps the script file for the next run of the same script, and writes a new one for another', async () => {
    const dirs = new RunDirs(await tempDir());
    const first = dirs.take('.sh', 'echo one');
    const inode = statSync(first.script).ino;
    await dirs.giveBack(first, true);
    const same = dirs.take('.sh', 'echo one');
    expect(same).toEqual(first);
    expect(statSync(same.script).ino).toBe(inode); // not written again
    await dirs.giveBack(same, true);
    const other = dirs.take('.sh', 'echo two');
    expect(other.path).toBe(first.path);
    expect(readFileSync(other.script, 'utf8')).toBe('echo two');
    await dirs.giveBack(other, true);
    const python = dirs.take('.py', 'print(3)');
    expect(python.path).toBe(first.path);
    expect(readdirSync(python.path).sort()).toEqual(['cwd', 'script.py']);
    expect(readFileSync(python.script, 'utf8')).toBe('print(3)');
  });

  it('writes the script again when a kept copy was changed since (same length included)', async () => {
    const dirs = new RunDirs(await tempDir());
    const first = dirs.take('.sh', 'echo one');
    await dirs.giveBack(first, true);
    writeFileSync(first.script, 'echo 1!!');
    const next = dirs.take('.sh', 'echo one');
    expect(next.path).toBe(first.path);
    expect(readFileSync(next.script, 'utf8')).toBe('echo one');
    expect(statSync(next.script).mode & 0o777).toBe(0o700);
  });

  it('checks a kept directory again when it is taken: a process the last run left may have written there since', async () => {
    const dirs = new RunDirs(await tempDir());
    const first = dirs.take('.sh', 'true');
    await dirs.giveBack(first, true);
    writeFileSync(join(first.cwd, 'written-later'), 'x');
    const next = dirs.take('.sh', 'true');
    expect(next.path).not.toBe(first.path);
    expect(readdirSync(next.cwd)).toEqual([]);
  });

  it('keeps at most 64 directories after a burst of parallel runs; the others are removed', async () => {
    const workDir = await tempDir();
    const dirs = new RunDirs(workDir);
    const taken = Array.from({ length: 70 }, () => dirs.take('.sh', 'true'));
    for (const dir of taken) await dirs.giveBack(dir, true);
    expect(readdirSync(workDir)).toHaveLength(64);
  });

  it('removes every kept directory when the agent stops', async () => {
    const workDir = await tempDir();
    const dirs = new RunDirs(workDir);
    const taken = [dirs.take('.sh', 'true'), dirs.take('.sh', 'true')];
    for (const dir of taken) await dirs.giveBack(dir, true);
    dirs.removeKept();
    expect(readdirSync(workDir)).toEqual([]);
    expect(dirs.take('.sh', 'true').path).not.toBe(taken[0]!.path);
  });
});

async function waitGone(path: string): Promise<void> {
  for (let i = 0; i < 500 && existsSync(path); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(existsSync(path)).toBe(false);
}
