import { describe, expect, it } from 'vitest';
import { rebalance, type FanoutMember } from './fanout.js';

const member = (id: string, state: string, held = 0, maxConcurrency: number | null = 2, maxErrors: number | null = null): FanoutMember => ({
  id, state, held, fanout_max_concurrency: maxConcurrency, fanout_max_errors: maxErrors, host_id: 'h1', awaiting_runbook: 0,
});

describe('rebalance', () => {
  it.each<[string, FanoutMember[], ReturnType<typeof rebalance>]>([
    ['a slot freed: the oldest held one goes', [member('a', 'succeeded'), member('b', 'running'), member('d', 'queued', 1), member('c', 'queued', 1)], { kind: 'release', release: ['c'] }],
    ['two slots freed', [member('a', 'succeeded'), member('b', 'failed'), member('c', 'queued', 1), member('d', 'queued', 1), member('e', 'queued', 1)], { kind: 'release', release: ['c', 'd'] }],
    ['no slot free: queued-unheld ones count as under way', [member('a', 'succeeded'), member('b', 'dispatched'), member('c', 'queued'), member('d', 'queued', 1)], { kind: 'release', release: [] }],
    ['nothing held', [member('a', 'succeeded'), member('b', 'running')], { kind: 'release', release: [] }],
    ['maxErrors reached: every not-yet-dispatched one is cancelled', [member('a', 'failed', 0, 2, 2), member('b', 'timed_out', 0, 2, 2), member('c', 'running', 0, 2, 2), member('d', 'queued', 0, 2, 2), member('e', 'queued', 1, 2, 2)], { kind: 'stop', cancel: ['d', 'e'], reason: expect.stringMatching(/2 hosts of this fan-out failed \(maxErrors 2\)/) }],
    ['lost counts as an error; cancelled and expired do not', [member('a', 'lost', 0, 1, 2), member('b', 'cancelled', 0, 1, 2), member('c', 'expired', 0, 1, 2), member('d', 'queued', 1, 1, 2)], { kind: 'release', release: ['d'] }],
    ['maxErrors without maxConcurrency', [member('a', 'failed', 0, null, 1), member('b', 'queued', 0, null, 1)], { kind: 'stop', cancel: ['b'], reason: expect.any(String) }],
    ['a cloud action’s instances (no host) are named so', [{ ...member('a', 'failed', 0, 1, 1), host_id: null }, { ...member('b', 'queued', 1, 1, 1), host_id: null }], { kind: 'stop', cancel: ['b'], reason: 'cancelled before it ran: 1 instance of this fan-out failed (maxErrors 1), so the rest were stopped' }],
  ])('%s', (_case, members, expected) => {
    expect(rebalance(members)).toEqual(expected);
  });
});
