import { describe, expect, it } from 'vitest';
import { sharedWithinTurn, TurnLoader } from './turn-loader.js';

describe('TurnLoader', () => {
  it('reads the keys asked for in one turn in one call, each once, and answers each its own rows', async () => {
    const calls: string[][] = [];
    const loader = new TurnLoader<string, number>(async (keys) => {
      calls.push(keys);
      return keys.flatMap((key): Array<[string, number]> => (key === 'none' ? [] : [[key, key.length], [key, 0]]));
    });
    const answers = await Promise.all([loader.load('a'), loader.load('bb'), loader.load('a'), loader.load('none')]);
    expect(calls).toEqual([['a', 'bb', 'none']]);
    expect(answers).toEqual([[1, 0], [2, 0], [1, 0], []]);
    // A later turn is a call of its own.
    expect(await loader.load('ccc')).toEqual([3, 0]);
    expect(calls).toHaveLength(2);
  });

  it('cuts a turn into calls of at most maxKeys', async () => {
    const calls: string[][] = [];
    const loader = new TurnLoader<string, string>(async (keys) => {
      calls.push(keys);
      return keys.map((key) => [key, key]);
    }, 2);
    expect(await Promise.all(['a', 'b', 'c'].map((key) => loader.load(key)))).toEqual([['a'], ['b'], ['c']]);
    expect(calls).toEqual([['a', 'b'], ['c']]);
  });

  it('fails every caller of a call that failed, and only them', async () => {
    const loader = new TurnLoader<string, string>(async (keys) => {
      if (keys.includes('bad')) throw new Error('the database is down');
      return keys.map((key) => [key, key]);
    }, 1);
    const [bad, good] = await Promise.allSettled([loader.load('bad'), loader.load('good')]);
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'the database is down' } });
    expect(good).toEqual({ status: 'fulfilled', value: ['good'] });
  });
});

describe('sharedWithinTurn', () => {
  it('runs once for the callers of one turn, again in a later turn', async () => {
    let runs = 0;
    const shared = sharedWithinTurn(async () => ++runs);
    const first = shared();
    // A caller in a microtask of the same turn (after an await) joins too.
    const joined = await Promise.resolve().then(() => shared());
    expect(await Promise.all([first, shared()])).toEqual([1, 1]);
    expect(joined).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await shared()).toBe(2);
  });

  it('fails the callers of the turn whose run failed; the next turn runs again', async () => {
    let runs = 0;
    const shared = sharedWithinTurn(async () => {
      runs += 1;
      if (runs === 1) throw new Error('database down');
      return runs;
    });
    await expect(Promise.all([shared(), shared()])).rejects.toThrow('database down');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await shared()).toBe(2);
  });
});
