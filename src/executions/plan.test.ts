import { describe, expect, it } from 'vitest';
import type { ExecutionResult } from './result.js';
import { planLedger, type Current, type LedgerOp } from './plan.js';

const spec = JSON.stringify({ flavour: 'autofix', interpreter: 'sh', script: 'true', env: {}, context: {}, timeoutSeconds: 5 });
const row = (id: string, state: string, host = 'h1', extra: Partial<Current> = {}): Current => ({
  id, state, host_id: host, started_at: null, finished_at: null, late_result: null, spec, event_id: 'e1', held: 0, fanout_max_concurrency: null, fanout_max_errors: null, queued_at: 10, expires_at: 1010, awaiting_runbook: 0, ...extra,
});
const result = (executionId: string, exitCode: number | null, ending: ExecutionResult['ending'] = 'exited'): ExecutionResult => ({
  executionId, ending, exitCode, signal: null, reason: null, startedAt: 100, finishedAt: 200,
  stdout: 'out', stderr: '', stdoutTruncated: false, stderrTruncated: false, artifacts: [], artifactsTruncated: false,
});
const session = { sessionId: 's1', nodeId: 'n1' };

describe('planLedger', () => {
  it('places a queued run on another host, telling its script the new host, only while it is still queued on the host it leaves', () => {
    const placed = JSON.stringify({ ...JSON.parse(spec), context: { PITCREW_HOSTNAME: 'web-1' } });
    const to = { hostId: 'h2', hostname: 'web-2', hostKey: 'web-2' };
    const op = (id: string): LedgerOp => ({ kind: 'place', id, fromHostId: 'h1', to, reason: 'moved' });
    const rows = [row('a', 'queued', 'h1', { spec: placed }), row('b', 'dispatched'), row('c', 'queued', 'h3'), row('d', 'queued', 'h1', { held: 1 })];
    const plan = planLedger(rows, new Map(), ['a', 'b', 'c', 'd'].map(op), 50);
    expect(plan.results).toEqual([true, false, false, false]);
    expect(plan.updates.get('a')).toMatchObject({ host_id: 'h2', hostname: 'web-2', host_key: 'web-2', session_id: null, reason: 'moved' });
    expect(JSON.parse(plan.updates.get('a')!.spec!).context.PITCREW_HOSTNAME).toBe('web-2');
    expect(plan.hostOf.get('a')).toBe('h1');
    expect(plan.transitions).toEqual([{ execution_id: 'a', from_state: 'queued', to_state: 'queued', reason: 'moved' }]);
    expect(plan.released).toEqual([{ id: 'a', hostId: 'h2' }]);
    expect([...plan.updates.keys()]).toEqual(['a']);
  });

  it('places a run once when two moves of it share a batch', () => {
    const to = (hostId: string) => ({ hostId, hostname: hostId, hostKey: hostId });
    const plan = planLedger([row('a', 'queued')], new Map(), [
      { kind: 'place', id: 'a', fromHostId: 'h1', to: to('h2'), reason: 'moved' },
      { kind: 'place', id: 'a', fromHostId: 'h1', to: to('h3'), reason: 'moved' },
    ], 50);
    expect(plan.results).toEqual([true, false]);
    expect(plan.updates.get('a')).toMatchObject({ host_id: 'h2' });
  });

  it('claims only queued executions of the claiming host', () => {
    const plan = planLedger([row('a', 'queued'), row('b', 'queued', 'h2'), row('c', 'running')], new Map(), [{ kind: 'claim', hostId: 'h1', ids: ['a', 'b', 'c', 'missing'], ...session }], 50);
    expect(plan.results[0]).toEqual([{ id: 'a', spec: JSON.parse(spec) }]);
    expect(plan.updates.get('a')).toMatchObject({ state: 'dispatched', dispatched_at: 50, session_id: 's1', node_id: 'n1' });
    expect([...plan.updates.keys()]).toEqual(['a']);
  });

  it('claims all of a host’s queued work when asked', () => {
    const plan = planLedger([row('a', 'queued'), row('b', 'queued')], new Map([['h1', ['a', 'b']]]), [{ kind: 'claim', hostId: 'h1', ids: 'all_queued', ...session }], 50);
    expect((plan.results[0] as Array<{ id: string }>).map((c) => c.id)).toEqual(['a', 'b']);
  });

  it('chains operations on one execution within a batch, with a transition each', () => {
    const ops: LedgerOp[] = [
      { kind: 'claim', hostId: 'h1', ids: ['a'], ...session },
      { kind: 'started', hostId: 'h1', executionId: 'a', startedAt: 100 },
      { kind: 'result', hostId: 'h1', result: result('a', 3) },
    ];
    const plan = planLedger([row('a', 'queued')], new Map(), ops, 50);
    expect(plan.results.slice(1)).toEqual([true, { state: 'failed', late: false }]);
    expect(plan.transitions.map((t) => `${t.from_state}>${t.to_state}`)).toEqual(['queued>dispatched', 'dispatched>running', 'running>failed']);
    expect(plan.updates.get('a')).toMatchObject({ state: 'failed', reason: 'exit code 3', exit_code: 3, started_at: 100, finished_at: 200, stdout: 'out' });
  });

  it('records a run whose result came before any started (a short run tells its start in its result) as having run, then ended', () => {
    const plan = planLedger([row('a', 'dispatched'), row('b', 'dispatched')], new Map(), [
      { kind: 'result', hostId: 'h1', result: result('a', 0) },
      // Refused by the agent: it never started, so it never ran.
      { kind: 'result', hostId: 'h1', result: { ...result('b', null, 'refused'), startedAt: null } },
    ], 50);
    expect(plan.results).toEqual([{ state: 'succeeded', late: false }, { state: 'failed', late: false }]);
    expect(plan.transitions.map((t) => `${t.execution_id}:${t.from_state}>${t.to_state}`)).toEqual(['a:dispatched>running', 'a:running>succeeded', 'b:dispatched>failed']);
    expect(plan.updates.get('a')).toMatchObject({ state: 'succeeded', started_at: 100, finished_at: 200 });
  });

  it('ignores a repeated start and a result from another host', () => {
    const plan = planLedger([row('a', 'running')], new Map(), [
      { kind: 'started', hostId: 'h1', executionId: 'a', startedAt: 1 },
      { kind: 'result', hostId: 'h2', result: result('a', 0) },
    ], 50);
    expect(plan.results).toEqual([false, undefined]);
    expect(plan.updates.size).toBe(0);
  });

  it('keeps a result for an execution that already ended as its late result, once, without changing its state', () => {
    const plan = planLedger([row('a', 'lost')], new Map(), [
      { kind: 'result', hostId: 'h1', result: result('a', 0) },
      { kind: 'result', hostId: 'h1', result: result('a', 9) },
    ], 50);
    expect(plan.results).toEqual([{ state: 'lost', late: true }, { state: 'lost', late: true }]);
    expect(JSON.parse(plan.updates.get('a')!.late_result!)).toMatchObject({ ending: 'exited', exitCode: 0 });
    expect(plan.transitions).toEqual([]);
  });

  it('takes the same result twice as one: the second is not a late result', () => {
    const plan = planLedger([row('a', 'running')], new Map(), [
      { kind: 'result', hostId: 'h1', result: result('a', 0) },
      { kind: 'result', hostId: 'h1', result: result('a', 0) },
    ], 50);
    expect(plan.results).toEqual([{ state: 'succeeded', late: false }, { state: 'succeeded', late: false }]);
    expect(plan.updates.get('a')!.late_result).toBeUndefined();
    const later = planLedger([row('a', 'succeeded', 'h1', { finished_at: 200 })], new Map(), [{ kind: 'result', hostId: 'h1', result: result('a', 0) }], 60);
    expect(later.results).toEqual([{ state: 'succeeded', late: false }]);
    expect(later.updates.size).toBe(0);
  });

  it('moves only from the states the lifecycle allows, and stamps terminal moves', () => {
    const plan = planLedger([row('a', 'running'), row('b', 'succeeded'), row('c', 'dispatched', 'h1')], new Map(), [
      { kind: 'move', ids: ['a', 'b'], to: 'lost', reason: 'gone' },
      { kind: 'move', ids: ['c'], to: 'queued', reason: 'again', from: ['dispatched'] },
    ], 77);
    expect(plan.results).toEqual([['a'], ['c']]);
    expect(plan.updates.get('a')).toEqual({ state: 'lost', reason: 'gone', finished_at: 77 });
    expect(plan.updates.get('c')).toEqual({ state: 'queued', reason: 'again', session_id: null, node_id: null });
    expect(plan.updates.has('b')).toBe(false);
  });

  // Every operation an agent's message becomes, naming an execution of another host (of this
  // tenant or another: a host belongs to one tenant), an unknown one, and one without a host.
  const hostOps: Array<[string, (id: string) => LedgerOp]> = [
    ['claim', (id) => ({ kind: 'claim', hostId: 'h1', ids: [id], ...session })],
    ['started', (id) => ({ kind: 'started', hostId: 'h1', executionId: id, startedAt: 1 })],
    ['result', (id) => ({ kind: 'result', hostId: 'h1', result: { ...result(id, 0), artifacts: [{ name: 'x', base64: 'aGk=' }] } })],
    ['move (interrupted: lost)', (id) => ({ kind: 'move', hostId: 'h1', ids: [id], to: 'lost', reason: 'forged', from: ['dispatched', 'running'] })],
    ['move (back to queued)', (id) => ({ kind: 'move', hostId: 'h1', ids: [id], to: 'queued', reason: 'forged', from: ['dispatched'] })],
  ];
  const victims = (state: string) => [row('other-host', state, 'h2'), row('no-host', state, null as unknown as string)];
  describe.each(hostOps)('a host’s %s', (_, op) => {
    it.each(['queued', 'dispatched', 'running', 'lost'])('changes nothing of another host’s %s execution, and lists what it named', (state) => {
      for (const id of ['other-host', 'no-host', 'unknown']) {
        const plan = planLedger(victims(state), new Map(), [op(id)], 50);
        expect(plan.updates.size).toBe(0);
        expect(plan.transitions).toEqual([]);
        expect(plan.artifacts).toEqual([]);
        expect(plan.refused).toEqual([{ hostId: 'h1', executionId: id, kind: op(id).kind }]);
      }
    });
  });

  it('marks every change a host asked for as that host’s, for the UPDATE to hold only on its rows', () => {
    const plan = planLedger([row('a', 'running'), row('b', 'lost'), row('c', 'running', 'h2')], new Map(), [
      { kind: 'result', hostId: 'h1', result: result('a', 0) },
      { kind: 'result', hostId: 'h1', result: result('b', 0) },
      { kind: 'move', ids: ['c'], to: 'lost', reason: 'the sweeper' },
    ], 50);
    expect([...plan.hostOf]).toEqual([['a', 'h1'], ['b', 'h1']]);
    expect(plan.updates.has('c')).toBe(true);
    expect(plan.refused).toEqual([]);
  });

  it.each([
    ['a script killed by a signal', { ending: 'exited', exitCode: null, signal: 'SIGKILL' }, /SIGKILL/],
    ['an interpreter that could not start', { ending: 'failed_to_start', exitCode: null, reason: 'the python interpreter (python3) is not installed' }, /the python interpreter \(python3\) is not installed/],
  ] as const)('ends %s failed, with a reason that says why', (_, ending, reason) => {
    const plan = planLedger([row('a', 'running')], new Map(), [{ kind: 'result', hostId: 'h1', result: { ...result('a', null), ...ending } }], 50);
    expect(plan.results).toEqual([{ state: 'failed', late: false }]);
    expect(plan.updates.get('a')).toMatchObject({ state: 'failed', reason: expect.stringMatching(reason), exit_code: null });
    expect(plan.transitions.map((t) => [t.to_state, t.reason])).toEqual([['failed', expect.stringMatching(reason)]]);
  });

  it('collects a diagnostics run’s artifacts only when the result is recorded', () => {
    const withFile = { ...result('a', 0), artifacts: [{ name: 'df.txt', base64: 'aGk=' }] };
    expect(planLedger([row('a', 'running')], new Map(), [{ kind: 'result', hostId: 'h1', result: withFile }], 1).artifacts).toEqual([{ execution_id: 'a', name: 'df.txt', base64: 'aGk=' }]);
    expect(planLedger([row('a', 'lost')], new Map(), [{ kind: 'result', hostId: 'h1', result: withFile }], 1).artifacts).toEqual([]);
  });

  describe('fan-out', () => {
    const fan = (id: string, state: string, held = 0, host = `h-${id}`) => row(id, state, host, { held, fanout_max_concurrency: 1, fanout_max_errors: 1 });

    it('never claims a held execution, even by id', () => {
      const plan = planLedger([fan('a', 'queued', 1, 'h1')], new Map(), [{ kind: 'claim', hostId: 'h1', ids: ['a'], ...session }], 50);
      expect(plan.results[0]).toEqual([]);
      expect(plan.updates.size).toBe(0);
    });

    it('releases the next held execution when one ends, in the same batch', () => {
      const plan = planLedger([fan('a', 'running'), fan('b', 'queued', 1), fan('c', 'queued', 1)], new Map(), [{ kind: 'result', hostId: 'h-a', result: result('a', 0) }], 50);
      expect(plan.released).toEqual([{ id: 'b', hostId: 'h-b' }]);
      // Its expiry counts from the release, with the same span it was queued with.
      expect(plan.updates.get('b')).toEqual({ held: 0, reason: null, expires_at: 1050 });
      expect(plan.updates.has('c')).toBe(false);
    });

    it('cancels the ones still waiting once maxErrors executions failed', () => {
      const plan = planLedger([fan('a', 'running'), fan('b', 'queued', 1), fan('c', 'queued', 1)], new Map(), [{ kind: 'result', hostId: 'h-a', result: result('a', 1) }], 50);
      expect(plan.released).toEqual([]);
      expect(plan.transitions.map((t) => `${t.execution_id}:${t.to_state}`)).toEqual(['a:failed', 'b:cancelled', 'c:cancelled']);
      expect(plan.updates.get('b')).toMatchObject({ state: 'cancelled', held: 0, finished_at: 50, reason: expect.stringMatching(/maxErrors 1/) });
    });

    it('leaves executions outside a fan-out alone', () => {
      const plan = planLedger([row('a', 'running'), row('b', 'queued', 'h2', { held: 0 })], new Map(), [{ kind: 'result', hostId: 'h1', result: result('a', 1) }], 50);
      expect(plan.transitions).toHaveLength(1);
      expect(plan.released).toEqual([]);
    });
  });
});
