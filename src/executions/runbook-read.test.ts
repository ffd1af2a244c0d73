import { describe, expect, it } from 'vitest';
import { rebalance } from './fanout.js';
import { planLedger, type Current } from './plan.js';

const spec = (id: string) => JSON.stringify({ flavour: 'autofix', interpreter: 'sh', runbook: { repositoryId: 'r1', path: 'fix.sh' }, env: {}, context: { PITCREW_EXECUTION_ID: id }, timeoutSeconds: 5 });
const row = (id: string, extra: Partial<Current> = {}): Current => ({
  id, state: 'queued', host_id: 'h1', started_at: null, finished_at: null, late_result: null, spec: spec(id), event_id: 'e1', held: 1,
  fanout_max_concurrency: null, fanout_max_errors: null, queued_at: 10, expires_at: 1010, awaiting_runbook: 1, ...extra,
});
const READ = { script: 'echo fixed\n', runbook: { repositoryName: 'ops', ref: 'main', commit: 'c0ffee', sha256: 'ab'.repeat(32) } };

describe('a git runbook read applied by the ledger', () => {
  it("gives each of the event's waiting runs the script and the commit, keeps its own context, and releases it with a fresh wait for its agent", () => {
    const plan = planLedger([row('a'), row('b', { host_id: 'h2' }), row('z', { event_id: 'e2' })], new Map(), [{ kind: 'runbook', eventId: 'e1', read: READ }], 500);
    expect(plan.results).toEqual([['a', 'b']]);
    expect(plan.released).toEqual([{ id: 'a', hostId: 'h1' }, { id: 'b', hostId: 'h2' }]);
    const a = plan.updates.get('a')!;
    expect(a).toMatchObject({ awaiting_runbook: 0, held: 0, reason: null, expires_at: 1500 });
    expect(JSON.parse(a.spec!)).toMatchObject({ script: 'echo fixed\n', context: { PITCREW_EXECUTION_ID: 'a' }, runbook: { repositoryId: 'r1', path: 'fix.sh', ...READ.runbook } });
    expect(plan.transitions).toEqual([]);
    // Another event's run waits for its own read.
    expect(plan.updates.has('z')).toBe(false);
  });

  it("releases a fan-out's first maxConcurrency runs and holds the rest for their turn", () => {
    const rows = ['c', 'a', 'b'].map((id) => row(id, { fanout_max_concurrency: 2 }));
    const plan = planLedger(rows, new Map(), [{ kind: 'runbook', eventId: 'e1', read: READ }], 500);
    expect(plan.released.map((r) => r.id)).toEqual(['a', 'b']);
    expect(plan.updates.get('c')).toMatchObject({ held: 1, awaiting_runbook: 0, reason: 'waiting for its turn: this fan-out runs on at most 2 hosts at once (maxConcurrency)' });
  });

  it('fails the waiting runs before dispatch when the read failed, and changes nothing of a run no longer waiting', () => {
    const plan = planLedger([row('a'), row('b', { state: 'cancelled', awaiting_runbook: 1 }), row('c', { awaiting_runbook: 0, held: 0 })], new Map(), [
      { kind: 'runbook', eventId: 'e1', read: { failed: 'could not read its runbook fix.sh: ref main does not exist' } },
    ], 500);
    expect(plan.results).toEqual([['a']]);
    expect(plan.transitions).toEqual([{ execution_id: 'a', from_state: 'queued', to_state: 'failed', reason: 'could not read its runbook fix.sh: ref main does not exist' }]);
    expect(plan.updates.get('a')).toMatchObject({ state: 'failed', awaiting_runbook: 0, held: 0, finished_at: 500 });
    expect(plan.updates.has('b') || plan.updates.has('c')).toBe(false);
    expect(plan.released).toEqual([]);
  });

  it('a freed fan-out slot never releases a run still waiting for its runbook', () => {
    const members = [
      { id: 'a', state: 'succeeded', held: 0, fanout_max_concurrency: 1, fanout_max_errors: null, host_id: 'h1', awaiting_runbook: 0 },
      { id: 'b', state: 'queued', held: 1, fanout_max_concurrency: 1, fanout_max_errors: null, host_id: 'h1', awaiting_runbook: 1 },
    ];
    expect(rebalance(members)).toEqual({ kind: 'release', release: [] });
  });
});
