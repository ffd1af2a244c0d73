import { chmodSync, existsSync, mkdirSync, readdirSync, rmdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunDirs, type RunDir } from './run-dirs.js';
import { useTempDirs } from './testing/helpers.js';

const tempDir = useTempDirs();

/** Gives a directory back and waits until it is kept or gone. */
async function giveBack(dirs: RunDirs, dir: RunDir, reusable = true): Promise<void> {
  await dirs.giveBack(dir, reusable);
}

describe('RunDirs', () => {
  it('makes a private run directory with an empty cwd, and hands it out again once given back untouched', async () => {
    const dirs = new RunDirs(await tempDir());
    const first = dirs.take();
    expect(readdirSync(first.path)).toEqual(['cwd']);
    expect(readdirSync(first.cwd)).toEqual([]);
    expect(statSync(first.path).mode & 0o777).toBe(0o700);
    expect(statSync(first.cwd).mode & 0o777).toBe(0o700);
    await giveBack(dirs, first);
    expect(dirs.take()).toEqual(first);
  });

  it('gives each run in progress its own directory', async () => {
    const dirs = new RunDirs(await tempDir());
    const taken = [dirs.take(), dirs.take(), dirs.take()];
    expect(new Set(taken.map((dir) => dir.path)).size).toBe(3);
  });

  it('removes a directory given back as not reusable (a process of the run is left)', async () => {
    const workDir = await tempDir();
    const dirs = new RunDirs(workDir);
    await giveBack(dirs, dirs.take(), false);
    expect(readdirSync(workDir)).toEqual([]);
  });

  const changes: Array<[string, (dir: RunDir) => void]> = [
    ['a file left in cwd', (dir) => writeFileSync(join(dir.cwd, 'left-behind'), 'x')],
    ['a directory left in cwd', (dir) => mkdirSync(join(dir.cwd, 'sub'))],
    ['a file left beside cwd', (dir) => writeFileSync(join(dir.path, 'script.sh'), 'x')],
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
      const first = dirs.take();
      change(first);
      await giveBack(dirs, first);
      const next = dirs.take();
      expect(next.path).not.toBe(first.path);
      expect(readdirSync(next.cwd)).toEqual([]);
      await waitGone(first.path);
      expect(readdirSync(workDir)).toEqual([next.path.slice(workDir.length + 1)]);
    });
  }

  it('checks a kept directory again when it is taken: a process the last run left may have written there since', async () => {
    const dirs = new RunDirs(await tempDir());
    const first = dirs.take();
    await giveBack(dirs, first);
    writeFileSync(join(first.cwd, 'written-later'), 'x');
    const next = dirs.take();
    expect(next.path).not.toBe(first.path);
    expect(readdirSync(next.cwd)).toEqual([]);
  });

  it('keeps at most 64 directories after a burst of parallel runs; the others are removed', async () => {
    const workDir = await tempDir();
    const dirs = new RunDirs(workDir);
    const taken = Array.from({ length: 70 }, () => dirs.take());
    for (const dir of taken) await giveBack(dirs, dir);
    expect(readdirSync(workDir)).toHaveLength(64);
  });

  it('removes every kept directory when the agent stops', async () => {
    const workDir = await tempDir();
    const dirs = new RunDirs(workDir);
    const taken = [dirs.take(), dirs.take()];
    for (const dir of taken) await giveBack(dirs, dir);
    dirs.removeKept();
    expect(readdirSync(workDir)).toEqual([]);
    expect(dirs.take().path).not.toBe(taken[0]!.path);
  });
});

async function waitGone(path: string): Promise<void> {
  for (let i = 0; i < 500 && existsSync(path); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(existsSync(path)).toBe(false);
}
