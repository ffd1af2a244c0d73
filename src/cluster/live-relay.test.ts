import { afterEach, describe, expect, it, vi } from 'vitest';
import { LiveExecutions } from '../executions/live.js';
import { LiveRelay, WATCH_RENEW_MS, type LiveNotice } from './live-relay.js';

afterEach(() => vi.useRealTimers());

/** Two nodes whose notices reach each other (and themselves, as NOTIFY does) in order. */
function twoNodes() {
  let now = 1_000_000;
  const clock = () => now;
  const wire: LiveNotice[] = [];
  const nodes: LiveRelay[] = [];
  const announce = (notice: LiveNotice) => {
    wire.push(notice);
    for (const node of nodes) node.received(notice);
  };
  const holding = new LiveExecutions((id, pieces) => holdingRelay.relay(id, pieces));
  const holdingRelay = new LiveRelay(holding, announce, (hostId) => hostId === 'h1', clock);
  const watching = new LiveExecutions((id, pieces) => watchingRelay.relay(id, pieces));
  const watchingRelay = new LiveRelay(watching, announce, () => false, clock);
  nodes.push(holdingRelay, watchingRelay);
  return { holding, watching, watchingRelay, wire, advance: (ms: number) => (now += ms) };
}

describe('LiveRelay', () => {
  it('relays what the holding node buffered and all that follows, while a stream watches', () => {
    const { holding, watching, watchingRelay } = twoNodes();
    holding.output('e1', 'stdout', 'before the watch\n');
    const seen: string[] = [];
    const stop = watchingRelay.watch('e1', 'h1');
    watching.subscribe('e1', (e) => seen.push(e.kind === 'output' ? e.chunk : e.state));
    // The replay went out before this subscriber existed: it is in the watching node's buffer.
    expect(watching.buffered('e1')).toEqual([{ kind: 'output', stream: 'stdout', chunk: 'before the watch\n' }]);
    holding.output('e1', 'stderr', 'after\n');
    expect(seen).toEqual(['after\n']);
    stop();
  });

  it('asks again every few seconds from where it is, and the holding node stops once the asking stops', () => {
    vi.useFakeTimers();
    const { holding, watchingRelay, wire, advance } = twoNodes();
    const stop = watchingRelay.watch('e1', 'h1');
    holding.output('e1', 'stdout', 'one');
    vi.advanceTimersByTime(WATCH_RENEW_MS);
    const watches = wire.filter((n) => n.kind === 'watch');
    expect(watches.map((n) => n.kind === 'watch' && n.from)).toEqual([0, 1]);
    // The renewal asked from piece 1: nothing was sent twice.
    expect(wire.filter((n) => n.kind === 'output')).toHaveLength(1);
    stop();
    advance(3 * WATCH_RENEW_MS + 1);
    holding.output('e1', 'stdout', 'two');
    expect(wire.filter((n) => n.kind === 'output')).toHaveLength(1);
  });

  it('does nothing across nodes for an execution whose agent is connected here, or on a single node', () => {
    const { holding, wire } = twoNodes();
    new LiveRelay(holding, (n) => wire.push(n), () => true).watch('e1', 'h1')();
    new LiveRelay(holding, undefined, () => false).watch('e1', 'h1')();
    expect(wire).toEqual([]);
    expect(holding.remoteNext('e1')).toBe(0);
  });
});
