import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLogger, turnWriter } from './log.js';

describe('the agent log', () => {
  it('writes the lines of one turn together, in order, once the turn ends', async () => {
    const writes: string[] = [];
    const log = createLogger(turnWriter((text) => writes.push(text), () => undefined));
    log.info('running a script', { executionId: 'a' });
    log.info('script finished', { executionId: 'a', exitCode: 0 });
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    const lines = writes[0]!.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line) as { msg: string })).toMatchObject([{ msg: 'running a script', executionId: 'a' }, { msg: 'script finished', exitCode: 0 }]);
    log.warn('later');
    await nextTurn();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!)).toMatchObject({ level: 'warn', msg: 'later' });
  });

  it('writes what is left when the process exits', () => {
    const writes: string[] = [];
    let atExit: (() => void) | undefined;
    const write = turnWriter((text) => writes.push(text), (flush) => (atExit = flush));
    write('one\n');
    write('two\n');
    atExit!();
    expect(writes).toEqual(['one\ntwo\n']);
    atExit!();
    expect(writes).toHaveLength(1);
  });
});
