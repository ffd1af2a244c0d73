import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processStart } from './process-group.js';
import { holderIsAlive, LOCK_FILE, lockStateDir, StateDirBusy, type LockHolder, type ProcessProbe } from './state-lock.js';
import { useTempDirs } from './testing/helpers.js';

const tempDir = useTempDirs();

const holder: LockHolder = { pid: 4242, start: '1000', bootId: 'boot-a', hostname: 'web-1', since: 0 };
const probe = (overrides: Partial<ProcessProbe>): ProcessProbe => ({ bootId: 'boot-a', stat: () => undefined, exists: () => false, ...overrides });
const stat20 = (state: string, start: string) => [state, ...Array<string>(18).fill('0'), start];

describe('holderIsAlive', () => {
  it.each([
    ['the same process (pid and start time)', probe({ stat: () => stat20('S', '1000') }), true],
    ['the pid reused by another process', probe({ stat: () => stat20('S', '2000') }), false],
    ['a zombie the crash left unreaped', probe({ stat: () => stat20('Z', '1000') }), false],
    ['no such process', probe({}), false],
    ['another boot', probe({ bootId: 'boot-b', stat: () => stat20('S', '1000') }), false],
    ['no /proc entry, but a signal finds it (another user, hidepid)', probe({ exists: () => true }), true],
  ])('%s', (_, p, alive) => {
    expect(holderIsAlive(holder, p)).toBe(alive);
  });
});

describe('lockStateDir', () => {
  const self: ProcessProbe = probe({ bootId: 'boot-a', stat: (pid) => (pid === process.pid ? stat20('R', processStart(pid)!) : undefined) });

  it('refuses while a live agent holds the directory, and takes it once released', async () => {
    const dir = await tempDir();
    const lock = await lockStateDir(dir, 'web-1', self);
    const held = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as LockHolder;
    expect(held).toMatchObject({ pid: process.pid, hostname: 'web-1', bootId: 'boot-a' });
    await expect(lockStateDir(dir, 'web-2', self)).rejects.toThrow(StateDirBusy);
    await expect(lockStateDir(dir, 'web-2', self)).rejects.toThrow(`holds the state directory ${dir}`);
    lock.release();
    await expect(stat(join(dir, LOCK_FILE))).rejects.toThrow('ENOENT');
    (await lockStateDir(dir, 'web-2', self)).release();
  });

  it('breaks the lock of an agent that is gone, and one it cannot read', async () => {
    for (const leftover of [JSON.stringify({ ...holder, pid: 999_999_999 }), 'half a line']) {
      const dir = await tempDir();
      await writeFile(join(dir, LOCK_FILE), leftover);
      const lock = await lockStateDir(dir, 'web-1', self);
      expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
      lock.release();
    }
  });

  it('release leaves a lock another process has taken since', async () => {
    const dir = await tempDir();
    const lock = await lockStateDir(dir, 'web-1', self);
    const other = JSON.stringify({ ...holder, pid: 1 });
    await writeFile(join(dir, LOCK_FILE), other);
    lock.release();
    expect(await readFile(join(dir, LOCK_FILE), 'utf8')).toBe(other);
  });
});
