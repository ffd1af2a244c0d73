import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { groupExists } from './process-group.js';

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
