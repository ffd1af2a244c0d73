import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { groupExists, killGroupsIn, statFields } from './process-group.js';
import { isAlive, isGroupAlive, useTempDirs, waitFor } from './testing/helpers.js';

describe('groupExists', () => {
  it('is true while a process of the group lives, false once none is left, and leaves the stack trace limit as it was', async () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    await once(child, 'spawn');
    const pgid = child.pid!;
    const limit = Error.stackTraceLimit;
    expect(groupExists(pgid)).toBe(true);
    process.kill(-pgid, 'SIGKILL');
    await once(child, 'exit');
    expect(groupExists(pgid)).toBe(false);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});

describe('killGroupsIn', () => {
  const tempDir = useTempDirs();

  it('kills the group of each process working in the directory, and nothing else', async () => {
    const [runDir, elsewhere] = [await tempDir(), await tempDir()];
    // The script left a child that moved away: it goes with its group.
    const inRun = spawn('sh', ['-c', `(cd ${elsewhere} && exec sleep 30) & exec sleep 30`], { cwd: runDir, detached: true, stdio: 'ignore' });
    const other = spawn('sleep', ['30'], { cwd: elsewhere, detached: true, stdio: 'ignore' });
    await Promise.all([once(inRun, 'spawn'), once(other, 'spawn')]);
    await waitFor(() => readdirSync('/proc').some((pid) => /^\d+$/.test(pid) && pid !== String(inRun.pid) && statFields(pid)?.[2] === String(inRun.pid)), 'the moved child');
    killGroupsIn(runDir);
    await waitFor(() => !isGroupAlive(inRun.pid!), 'the run\'s group to be killed');
    expect(isAlive(other.pid!)).toBe(true);
    process.kill(-other.pid!, 'SIGKILL');
  });
});
