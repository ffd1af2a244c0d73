import { describe, expect, it } from 'vitest';
import type { HostFacts } from '../engine/decide.js';
import { planMoves, type StrandedRun } from './placement.js';

const host = (id: string, tags: string[], online: boolean, lastPickedAt: number | null = null): HostFacts => ({ id, hostname: id, tags, online, lastPickedAt });
const run = (id: string, fromHostId: string, tags = ['batch'], tenantId = 't1'): StrandedRun => ({ id, tenantId, fromHostId, fromHostname: fromHostId, tags });

describe('planMoves', () => {
  it('moves each stranded run to an online host of its tags, the least recently picked, spreading several', () => {
    const hosts = new Map([['t1', [host('a', ['batch'], false), host('b', ['batch'], true, 20), host('c', ['batch', 'x'], true, 10), host('d', ['other'], true)]]]);
    const moves = planMoves([run('r1', 'a'), run('r2', 'a')], hosts, 100);
    expect(moves.map((m) => [m.run.id, m.to.id])).toEqual([['r1', 'c'], ['r2', 'b']]);
  });

  it('takes turns over hosts never picked, and after hosts picked later than now', () => {
    const never = new Map([['t1', [host('a', ['batch'], false), host('b', ['batch'], true), host('c', ['batch'], true)]]]);
    expect(planMoves([run('r1', 'a'), run('r2', 'a'), run('r3', 'a'), run('r4', 'a')], never, 100).map((m) => [m.to.id, m.at])).toEqual([['b', 100], ['c', 101], ['b', 102], ['c', 103]]);
    const ahead = new Map([['t1', [host('b', ['batch'], true, 500), host('c', ['batch'], true, 400)]]]);
    expect(planMoves([run('r1', 'a'), run('r2', 'a')], ahead, 100).map((m) => [m.to.id, m.at])).toEqual([['c', 501], ['b', 502]]);
  });

  it('leaves a run where it is when no other host of its tags is online, and never looks at another tenant', () => {
    const hosts = new Map([['t1', [host('a', ['batch'], true), host('b', ['batch'], false)]], ['t2', [host('z', ['batch'], true)]]]);
    expect(planMoves([run('r1', 'a')], hosts, 100)).toEqual([]);
    expect(planMoves([run('r2', 'b', ['batch'], 't3')], hosts, 100)).toEqual([]);
  });

  it('needs every tag of the run on the host it moves to', () => {
    const hosts = new Map([['t1', [host('b', ['batch'], true), host('c', ['batch', 'eu'], true)]]]);
    expect(planMoves([run('r1', 'a', ['batch', 'eu'])], hosts, 100).map((m) => m.to.id)).toEqual(['c']);
  });
});
